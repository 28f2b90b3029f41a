"""An in-test OpenAI-compatible server for the LLM (DSPy) mode: scripted, slow, failing or replayed.

    with openai_stub(["reply 1", "reply 2"]) as stub:      # replies in order (last one repeats)
        settings = Settings(llm_url=stub.url, llm_model="openai/stub")
    with openai_stub(lambda request: "...") as stub:       # or computed from the request body
    with openai_stub(Replay.load(path), latency_s=0.3):    # recorded request -> reply pairs, 300 ms each
    stub.faults.down = True                                # from now on every request gets HTTP 503

``stub.requests`` records every request body (dicts), so tests can check prompts. Faults: ``latency_s``
(every reply waits), ``down`` (HTTP 503), ``fail_first`` (the first n requests get HTTP 500), and a reply
of ``STALL`` sleeps past any sensible client timeout. Usage reports real token counts (tiktoken) of
the prompt and the reply. Serves ``POST /v1/chat/completions`` and ``POST /v1/completions``.

Replay: a request is identified by its DSPy signature (the output field names, e.g. ``intent+confidence
+reason``) and its ``question`` (plus ``feedback`` when re-asked, and the few inputs of ``EXTRA_KEY_FIELDS``
that tell apart two requests with one question); the record stores that key, a digest
of the whole prompt (to tell when prompts changed since recording) and the reply's output fields. A
request without a record gets a reply DSPy cannot parse, so the step falls back to fast mode (``misses``); so
does a request recorded without a reply (``declined``: the responder had no answer to give).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cubesage_core.tokens import count_tokens

STALL = "__STALL__"
NO_RECORD = "(no recorded reply for this request)"
Script = list[str] | Callable[[dict[str, Any]], str]
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.DOTALL)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\nAll interactions", re.DOTALL)
KEY_FIELDS = ("question", "feedback")
# inputs that tell apart requests of one signature with the same question (the detail part "refund reasons" of
# two mixed questions names other rows; an aggregate part keeps its whole question's period)
EXTRA_KEY_FIELDS = {"sql": ("entities", "bindings"), "cube_query": ("time_ranges",)}


@dataclass
class Faults:
    latency_s: float = 0.0
    down: bool = False
    fail_first: int = 0


@dataclass
class Stub:
    url: str
    faults: Faults = field(default_factory=Faults)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _text(body: dict[str, Any]) -> tuple[str, str]:
    """(system, last user message) of a chat request."""
    messages = body.get("messages") or [{"role": "user", "content": body.get("prompt", "")}]
    system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
    user = next((str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    return system, user


def request_fields(body: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """(signature id: output field names joined by '+', input field values) of a DSPy ChatAdapter request."""
    system, user = _text(body)
    outputs = _OUTPUTS.search(system)
    names = re.findall(r"^\d+\. `(\w+)`", outputs.group(1), re.MULTILINE) if outputs else []
    return "+".join(names), {name: value.strip() for name, value in _FIELD.findall(user)}


def replay_key(body: dict[str, Any]) -> str:
    signature, inputs = request_fields(body)
    fields = (*KEY_FIELDS, *EXTRA_KEY_FIELDS.get(signature, ()))
    parts = [signature] + [f"{k}={inputs[k]}" for k in fields if inputs.get(k) not in (None, "", "none")]
    return "\n".join(parts)


def prompt_digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body.get("messages"), ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass
class Replay:
    """Recorded request -> reply pairs (JSON lines), served as the stub's script."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # keys whose prompt differs from the recorded one
    declined: list[str] = field(default_factory=list)  # recorded without a reply: the step is meant to fall back

    @classmethod
    def load(cls, path: Path) -> Replay:
        records = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["key"]] = record
        return cls(records)

    def __call__(self, body: dict[str, Any]) -> str:
        key = replay_key(body)
        record = self.records.get(key)
        if record is None:
            self.misses.append(key)
            return NO_RECORD
        if record.get("prompt") != prompt_digest(body):
            self.changed.append(key)
        if record["reply"] is None:
            self.declined.append(key)
            return NO_RECORD
        return dspy_reply(**record["reply"])


@dataclass
class Recorder:
    """A script that answers with ``responder(signature, inputs) -> output fields`` and keeps the pairs."""

    responder: Callable[[str, dict[str, str]], dict[str, Any] | None]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __call__(self, body: dict[str, Any]) -> str:
        signature, inputs = request_fields(body)
        reply = self.responder(signature, inputs)
        key = replay_key(body)
        self.records[key] = {"key": key, "prompt": prompt_digest(body), "reply": reply}
        return NO_RECORD if reply is None else dspy_reply(**reply)

    def save(self, path: Path) -> None:
        lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for _, r in sorted(self.records.items())]
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _handler(script: Script, stub: Stub, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    position = {"i": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:  # /v1/models, for readiness probes
            self._send(200 if not stub.faults.down else 503, {"object": "list", "data": []})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                stub.requests.append(body)
                n = len(stub.requests)
                faults = stub.faults
            if faults.latency_s:
                time.sleep(faults.latency_s)
            if faults.down or n <= faults.fail_first:
                self._send(503 if faults.down else 500, {"error": {"message": "stub failure", "type": "server_error"}})
                return
            if callable(script):  # a callable script is called concurrently: it keeps its own state safe
                reply = script(body)
            else:
                with lock:
                    reply = script[min(position["i"], len(script) - 1)]
                    position["i"] += 1
            if reply == STALL:
                time.sleep(30)
            self._send(200, _completion(body, reply, n))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _completion(body: dict[str, Any], reply: str, n: int) -> dict[str, Any]:
    prompt = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages") or []) or count_tokens(
        str(body.get("prompt", ""))
    )
    completion = count_tokens(reply)
    return {
        "id": f"stub-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "stub"),
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}, "text": reply}
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


@contextmanager
def openai_stub(script: Script, *, latency_s: float = 0.0) -> Iterator[Stub]:
    """Run the stub on a free loopback port for the duration of the block."""
    lock = threading.Lock()
    stub = Stub(url="", faults=Faults(latency_s=latency_s))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script, stub, lock))
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()


def dspy_reply(**fields: object) -> str:
    """A reply in DSPy's ChatAdapter format for the given output fields."""
    parts = [
        f"[[ ## {name} ## ]]\n{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for name, value in fields.items()
    ]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])
