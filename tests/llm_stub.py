"""An in-test OpenAI-compatible server with scripted replies, for the LLM (DSPy) mode.

    with openai_stub(["reply 1", "reply 2"]) as stub:      # replies in order (last one repeats)
        settings = Settings(llm_url=stub.url, llm_model="openai/stub")
    with openai_stub(lambda request: "...") as stub:       # or computed from the request body
        ...

``stub.requests`` records every request body (dicts), so tests can check prompts.
A reply of ``STALL`` sleeps past any sensible client timeout (to test fallbacks).
Serves ``POST /v1/chat/completions`` and ``POST /v1/completions`` (non-streaming).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STALL = "__STALL__"
Script = list[str] | Callable[[dict[str, Any]], str]


@dataclass
class Stub:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def _handler(script: Script, stub: Stub, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    position = {"i": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                stub.requests.append(body)
                if callable(script):
                    reply = script(body)
                else:
                    reply = script[min(position["i"], len(script) - 1)]
                    position["i"] += 1
            if reply == STALL:
                time.sleep(30)
            payload = {
                "id": f"stub-{len(stub.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}, "text": reply}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
            data = json.dumps(payload).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


@contextmanager
def openai_stub(script: Script) -> Iterator[Stub]:
    """Run the stub on a free loopback port for the duration of the block."""
    lock = threading.Lock()
    stub = Stub(url="")
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
    parts = [f"[[ ## {name} ## ]]\n{value if isinstance(value, str) else json.dumps(value)}"
             for name, value in fields.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])
