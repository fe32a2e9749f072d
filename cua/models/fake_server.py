"""A scripted model served over HTTP as an OpenAI-compatible (and Anthropic-compatible) endpoint.

    python -m cua.models.fake_server --script replies.jsonl --port 8011
    OPENAI_BASE_URL=http://127.0.0.1:8011/v1 cua run "..." --model openai:fake

Serves POST /v1/chat/completions, POST /v1/responses (computer-use), POST /v1/messages
(Anthropic), GET /v1/models, and
GET /_requests (every request body received, for tests). Replies come from the script in
order (format: cua.models.scripted); {"status": 503} lines answer with that HTTP error.
Chat completions are checked as strictly as the real service (cua.models.fake_chat) and, with
--policy gui|grounder, answered by reading the screenshot instead of from a script.
Binds 127.0.0.1 only. Standard library HTTP server: starts in well under a second.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cua.models.fakes.json_http import JSONHandler
from cua.models.fake_chat import DEFAULT_IMAGE_LIMIT, POLICIES, ChatRejected, check_chat
from cua.models.scripted import ScriptEntry, estimate_tokens, load_script, parse_entry


class ScriptState:
    """The script and what has been asked of it; shared by all handler threads."""

    def __init__(self, entries: list[ScriptEntry], chat_policy: Any = None, image_limit: int = DEFAULT_IMAGE_LIMIT):
        self.entries = entries
        self.next = 0
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[dict[str, Any]] = []  # chat requests answered 400/404, with the error
        self.chat_policy = chat_policy  # callable(body, images) -> reply text, instead of the script
        self.image_limit = image_limit
        self.lock = threading.Lock()

    def take(self, body: dict[str, Any]) -> ScriptEntry | None:
        with self.lock:
            self.requests.append(body)
            if self.next >= len(self.entries):
                return None
            entry = self.entries[self.next]
            self.next += 1
            return entry


def _prompt_chars(body: dict[str, Any]) -> int:
    total = 0
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            total += len(c)
        elif isinstance(c, list):
            total += sum(len(p.get("text", "")) for p in c if isinstance(p, dict))
    return total + len(str(body.get("system", "")))


def _openai_body(entry: ScriptEntry, body: dict[str, Any]) -> dict[str, Any]:
    pt = entry.usage.get("prompt_tokens", max(1, _prompt_chars(body) // 4))
    ct = entry.usage.get("completion_tokens", estimate_tokens(entry.text or "x"))
    return {
        "id": f"chatcmpl-fake-{int(time.time() * 1000)}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": entry.text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


def _anthropic_body(entry: ScriptEntry, body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if entry.text:
        content.append({"type": "text", "text": entry.text})
    if entry.tool is not None:
        content.append({"type": "tool_use", "id": "toolu_fake", "name": "computer", "input": entry.tool})
    pt = entry.usage.get("prompt_tokens", max(1, _prompt_chars(body) // 4))
    ct = entry.usage.get("completion_tokens", estimate_tokens(entry.text or "x"))
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
            "content": content, "stop_reason": "tool_use" if entry.tool else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": pt, "output_tokens": ct}}


def _responses_body(entry: ScriptEntry, body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI Responses API shape: a computer_call item for tool entries, else a message."""
    if entry.tool is not None:
        item: dict[str, Any] = {"type": "computer_call", "id": "cu_fake", "call_id": "call_fake",
                                "action": entry.tool, "pending_safety_checks": [], "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": entry.text, "annotations": []}]}
    pt = entry.usage.get("prompt_tokens", 100)
    ct = entry.usage.get("completion_tokens", estimate_tokens(entry.text or "x"))
    return {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": body.get("model", "fake"), "output": [item], "parallel_tool_calls": False, "tool_choice": "auto",
            "tools": body.get("tools", []),
            "usage": {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct,
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def make_handler(state: ScriptState) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "cua"}]})
            elif self.path == "/_requests":
                with state.lock:
                    self._send(200, {"requests": state.requests, "served": state.next})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                return self._send(400, {"error": {"message": "request body is not JSON"}})
            route = self.path.split("?")[0].rstrip("/")
            if route not in ("/v1/chat/completions", "/chat/completions", "/v1/messages", "/v1/responses"):
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            if route in ("/v1/chat/completions", "/chat/completions"):
                try:  # strict, as the real service: cua.models.fake_chat
                    images = check_chat(body, state.image_limit)
                    text = state.chat_policy(body, images) if state.chat_policy is not None else None
                except ChatRejected as e:
                    with state.lock:
                        state.requests.append(body)
                        state.rejected.append({"request": len(state.requests) - 1, **e.payload})
                    return self._send(e.status, e.payload)
                if text is not None:
                    with state.lock:
                        state.requests.append(body)
                        state.next += 1
                    return self._send(200, _openai_body(ScriptEntry(text=text), body))
            entry = state.take(body)
            if entry is None:
                return self._send(400, {"error": {"message": f"fake server: script exhausted after "
                                                  f"{len(state.entries)} replies", "type": "invalid_request_error"}})
            if entry.delay:
                time.sleep(entry.delay)
            if entry.status is not None and entry.status >= 400:
                return self._send(entry.status, {"error": {"message": f"scripted HTTP {entry.status}",
                                                           "type": "server_error"}})
            make = {"/v1/messages": _anthropic_body, "/v1/responses": _responses_body}.get(route, _openai_body)
            self._send(200, make(entry, body))

    return Handler


class FakeServer:
    """In-process server on a background thread: `with FakeServer(script) as srv: srv.base_url`."""

    def __init__(self, script: Path | str | list[Any] = (), port: int = 0, host: str = "127.0.0.1",
                 chat_policy: Any = None, image_limit: int = DEFAULT_IMAGE_LIMIT):
        entries = [parse_entry(v) for v in script] if isinstance(script, (list, tuple)) else load_script(script)
        self.state = ScriptState(entries, chat_policy, image_limit)
        self.httpd = ThreadingHTTPServer((host, port), make_handler(self.state))
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fake-model-server", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Serve a JSONL reply script as an OpenAI-compatible endpoint.",
                                 epilog="Example: python -m cua.models.fake_server --script replies.jsonl --port 8011")
    ap.add_argument("--script", type=Path, help="JSONL of replies (see cua.models.scripted)")
    ap.add_argument("--policy", choices=sorted(POLICIES), help="answer chat completions by reading the screenshot: "
                    "gui (UI-TARS / Qwen-VL / OpenCUA opening Find and Replace) or grounder (a grounding model)")
    ap.add_argument("--image-limit", type=int, default=DEFAULT_IMAGE_LIMIT, help="images allowed per request")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = any free port)")
    args = ap.parse_args(argv)
    try:
        if args.script is None and args.policy is None:
            raise ValueError("give --script FILE or --policy gui|grounder")
        policy = POLICIES[args.policy]() if args.policy else None
        srv = FakeServer(args.script or [], port=args.port, chat_policy=policy, image_limit=args.image_limit)
    except Exception as e:  # noqa: BLE001 - one clear line, not a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"listening on {srv.base_url}", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
