"""Start/stop a real single-node Elasticsearch 8.19.21 for integration tests.

The server is built from Maven Central artifacts by ``build.sh`` (see README.md) and
launched with ``java -cp target/classes:target/lib/* org.elasticsearch.node.CubesageEsLauncher``.

Usage::

    from es_server import start_elasticsearch

    with start_elasticsearch(tmp_path / "es") as es:
        print(es.url)  # e.g. http://127.0.0.1:41234

``python es_server.py`` runs a smoke test (index with dense_vector + text, _bulk, kNN, match).

Stdlib only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ES_VERSION = "8.19.21"
MAIN_CLASS = "org.elasticsearch.node.CubesageEsLauncher"
READY_PREFIX = "ES_READY "

_JVM_CANDIDATES = (
    "/usr/lib/jvm/java-17-openjdk-amd64",
    "/usr/lib/jvm/temurin-25-jdk-amd64",
)


class EsStartError(RuntimeError):
    pass


def find_java_home() -> str | None:
    """JAVA_HOME to use: $CUBESAGE_ES_JAVA_HOME, else $JAVA_HOME, else a known JDK, else None (PATH)."""
    for env in ("CUBESAGE_ES_JAVA_HOME", "JAVA_HOME"):
        v = os.environ.get(env)
        if v and Path(v, "bin", "java").exists():
            return v
    for cand in _JVM_CANDIDATES:
        if Path(cand, "bin", "java").exists():
            return cand
    return None


def _java_bin(java_home: str | None) -> str:
    if java_home:
        return str(Path(java_home, "bin", "java"))
    java = shutil.which("java")
    if not java:
        raise EsStartError("no java found (set JAVA_HOME to a JDK >= 17)")
    return java


def build(force: bool = False) -> None:
    """Run build.sh (a no-op when up to date). Serialised with a file lock for parallel test workers."""
    env = dict(os.environ)
    jh = find_java_home()
    if jh:
        env["JAVA_HOME"] = jh
    lock_path = HERE / ".build.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cmd = ["bash", str(HERE / "build.sh")] + (["--force"] if force else [])
        proc = subprocess.run(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            raise EsStartError(f"build.sh failed (rc={proc.returncode}):\n{proc.stdout[-5000:]}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http(
    method: str, url: str, body: bytes | None = None, content_type: str = "application/json", timeout: float = 30
) -> tuple[int, dict | str]:
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read().decode()
            status = resp.status
    except urllib.error.HTTPError as e:
        raw = e.read().decode()
        status = e.code
    try:
        return status, json.loads(raw) if raw else ""
    except ValueError:
        return status, raw


class EsServer:
    """A running Elasticsearch JVM. Use ``.url``; ``.stop()`` or use as a context manager."""

    def __init__(self, proc: subprocess.Popen, url: str, port: int, home: Path, log_path: Path, startup_seconds: float):
        self.proc = proc
        self.url = url
        self.port = port
        self.home = home
        self.log_path = log_path
        self.startup_seconds = startup_seconds
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_mb(self) -> float | None:
        """Resident memory of the JVM in MB (Linux /proc), None if not running."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        except OSError:
            return None
        return None

    def request(
        self, method: str, path: str, body: dict | list | str | None = None, timeout: float = 30
    ) -> tuple[int, dict | str]:
        """Tiny helper: JSON (dict) or NDJSON (list of dicts / str) request; returns (status, parsed body)."""
        data = None
        ctype = "application/json"
        if isinstance(body, list):
            data = ("\n".join(json.dumps(x) for x in body) + "\n").encode()
            ctype = "application/x-ndjson"
        elif isinstance(body, str):
            data = body.encode()
            ctype = "application/x-ndjson"
        elif body is not None:
            data = json.dumps(body).encode()
        return _http(method, self.url + path, data, ctype, timeout)

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM (clean shutdown), then SIGKILL after ``timeout`` seconds. Returns the exit code."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.proc.stdin:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        if self._reader:
            self._reader.join(timeout=5)
        return self.proc.returncode

    def __enter__(self) -> EsServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EsServer(url={self.url!r}, pid={self.proc.pid})"


def start_elasticsearch(
    workdir: Path,
    port: int | None = None,
    heap: str = "512m",
    timeout: float = 120,
    cluster_name: str = "cubesage-test",
    extra_settings: dict[str, str] | None = None,
) -> EsServer:
    """Build if needed, start one ES node on 127.0.0.1 and wait until it answers ``GET /``.

    ``workdir`` becomes the node's home (data/, logs/, config/, tmp/ and es-launcher.log inside);
    the caller owns it and should delete it afterwards. ``port=None`` picks a free port.
    """
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    build()
    attempts = 1 if port is not None else 3
    last_err: Exception | None = None
    for _ in range(attempts):
        try:
            return _start_once(
                workdir, port if port is not None else free_port(), heap, timeout, cluster_name, extra_settings or {}
            )
        except EsStartError as e:  # e.g. lost a race for the free port
            last_err = e
            if "BindException" not in str(e) and "Address already in use" not in str(e):
                raise
    assert last_err is not None
    raise last_err


def _launch_command(
    java_home: str | None, workdir: Path, port: int, heap: str, cluster_name: str, extra_settings: dict[str, str]
) -> list[str]:
    tmp = workdir / "tmp"
    tmp.mkdir(exist_ok=True)
    cp = os.pathsep.join([str(HERE / "target" / "classes"), str(HERE / "target" / "lib" / "*")])
    cmd = [
        _java_bin(java_home),
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:-OmitStackTraceInFastThrow",
        "-Dfile.encoding=UTF-8",
        f"-Djava.io.tmpdir={tmp}",
        "-Dio.netty.noUnsafe=true",
        "-Dio.netty.noKeySetOptimization=true",
        "-Dio.netty.recycler.maxCapacityPerThread=0",
        "-Dlog4j2.formatMsgNoLookups=true",
        "-Djna.nosys=true",
        "-Des.networkaddress.cache.ttl=60",
        "-Des.networkaddress.cache.negative.ttl=10",
        "-cp",
        cp,
        MAIN_CLASS,
        "--home",
        str(workdir),
        "--port",
        str(port),
        "--cluster-name",
        cluster_name,
        "--die-with-parent",
    ]
    for k, v in extra_settings.items():
        cmd += ["-E", f"{k}={v}"]
    return cmd


def _launch_env(java_home: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if java_home:
        env["JAVA_HOME"] = java_home
    env.pop("JAVA_TOOL_OPTIONS", None)
    env.pop("_JAVA_OPTIONS", None)
    return env


def _start_once(
    workdir: Path, port: int, heap: str, timeout: float, cluster_name: str, extra_settings: dict[str, str]
) -> EsServer:
    java_home = find_java_home()
    log_path = workdir / "es-launcher.log"
    cmd = _launch_command(java_home, workdir, port, heap, cluster_name, extra_settings)
    env = _launch_env(java_home)

    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    ready = threading.Event()
    ready_url: list[str] = []

    def _pump() -> None:
        assert proc.stdout is not None
        with open(log_path, "a") as log:
            for line in proc.stdout:
                log.write(line)
                log.flush()
                if line.startswith(READY_PREFIX) and not ready.is_set():
                    ready_url.append(line[len(READY_PREFIX) :].split()[0])
                    ready.set()

    reader = threading.Thread(target=_pump, name=f"es-log-{port}", daemon=True)
    reader.start()

    def _fail(msg: str) -> EsStartError:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        reader.join(timeout=5)
        tail = log_path.read_text(errors="replace")[-6000:] if log_path.exists() else ""
        return EsStartError(f"{msg} (log: {log_path})\n{tail}")

    deadline = t0 + timeout
    while not ready.wait(0.1):
        if proc.poll() is not None:
            raise _fail(f"elasticsearch exited with code {proc.returncode} before it was ready")
        if time.monotonic() > deadline:
            raise _fail(f"elasticsearch not ready within {timeout}s")

    url = ready_url[0] if ready_url else f"http://127.0.0.1:{port}"
    while not _answers(url):
        if proc.poll() is not None:
            raise _fail(f"elasticsearch exited with code {proc.returncode}")
        if time.monotonic() > deadline:
            raise _fail(f"elasticsearch did not answer GET / within {timeout}s")
        time.sleep(0.1)

    server = EsServer(proc, url, port, workdir, log_path, time.monotonic() - t0)
    server._reader = reader
    return server


def _answers(url: str) -> bool:
    try:
        status, _ = _http("GET", url + "/", timeout=5)
    except (urllib.error.URLError, OSError):
        return False
    return status == 200


def _smoke_test() -> int:
    t_build = time.monotonic()
    build()
    print(f"build check: {time.monotonic() - t_build:.1f}s")
    with tempfile.TemporaryDirectory(prefix="cubesage-es-") as tmp:
        t0 = time.monotonic()
        with start_elasticsearch(Path(tmp) / "es") as es:
            print(f"started {es} in {time.monotonic() - t0:.2f}s (java: {find_java_home() or 'PATH'})")
            _, info = es.request("GET", "/")
            print("version:", info["version"]["number"], "lucene:", info["version"]["lucene_version"])

            def timed(label, method, path, body=None):
                t = time.monotonic()
                status, resp = es.request(method, path, body)
                print(f"{label}: HTTP {status} in {(time.monotonic() - t) * 1000:.0f} ms")
                if status >= 300:
                    raise SystemExit(f"{label} failed: {resp}")
                return resp

            timed(
                "create index",
                "PUT",
                "/docs",
                {
                    "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                    "mappings": {
                        "properties": {
                            "title": {"type": "text"},
                            "vec": {"type": "dense_vector", "dims": 4, "index": True, "similarity": "cosine"},
                        }
                    },
                },
            )
            docs = [
                ("1", "the quick brown fox", [1.0, 0.0, 0.0, 0.0]),
                ("2", "a lazy dog sleeps", [0.0, 1.0, 0.0, 0.0]),
                ("3", "quick quick rabbit", [0.7, 0.7, 0.0, 0.1]),
            ]
            bulk = []
            for _id, title, vec in docs:
                bulk += [{"index": {"_index": "docs", "_id": _id}}, {"title": title, "vec": vec}]
            resp = timed("bulk", "POST", "/_bulk", bulk)
            assert not resp["errors"], resp
            timed("refresh", "POST", "/docs/_refresh")
            knn = timed(
                "knn search",
                "POST",
                "/docs/_search",
                {
                    "knn": {"field": "vec", "query_vector": [0.9, 0.1, 0.0, 0.0], "k": 2, "num_candidates": 10},
                    "_source": ["title"],
                },
            )
            knn_ids = [(h["_id"], round(h["_score"], 4)) for h in knn["hits"]["hits"]]
            print("  knn hits:", knn_ids)
            assert [i for i, _ in knn_ids] == ["1", "3"], knn_ids
            bm25 = timed("match search", "POST", "/docs/_search", {"query": {"match": {"title": "quick"}}})
            bm25_ids = [(h["_id"], round(h["_score"], 4)) for h in bm25["hits"]["hits"]]
            print("  match hits:", bm25_ids)
            assert [i for i, _ in bm25_ids] == ["3", "1"], bm25_ids
            _, health = es.request("GET", "/_cluster/health")
            print("cluster health:", health["status"])

            try:  # optional: the official Python client, if importable
                import elasticsearch  # type: ignore
            except ImportError:
                print("python elasticsearch client: not installed, skipped")
            else:
                client = elasticsearch.Elasticsearch(es.url)
                r = client.search(
                    index="docs", knn={"field": "vec", "query_vector": [0, 1, 0, 0], "k": 1, "num_candidates": 10}
                )
                print(
                    f"python elasticsearch client {elasticsearch.__versionstr__}: info ok "
                    f"({client.info()['version']['number']}), knn top hit = {r['hits']['hits'][0]['_id']}"
                )
                client.close()

            print(f"JVM RSS after smoke test: {es.rss_mb():.0f} MB (pid {es.pid})")
            t_stop = time.monotonic()
        rc = es.proc.returncode
        print(f"stopped in {time.monotonic() - t_stop:.2f}s, exit code {rc}")
    print("SMOKE TEST OK")
    return 0


if __name__ == "__main__":
    sys.exit(_smoke_test())
