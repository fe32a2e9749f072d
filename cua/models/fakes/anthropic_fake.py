"""A strict stand-in for Anthropic's Messages API (POST /v1/messages), for tests and benchmarks.

    python -m cua.models.fakes.anthropic_fake --policy find_replace --port 8021
    ANTHROPIC_BASE_URL=http://127.0.0.1:8021 ANTHROPIC_API_KEY=x cua run "Open the Find and Replace dialog" \\
        --env sandbox:mousepad --model anthropic:claude-sonnet-4-5

It checks requests as the real service does and answers errors in its shape (`{"type": "error",
"error": {"type": ..., "message": ...}}`): a `tool_use` left without its `tool_result` in the next
message, a `tool_result` for an unknown id, a toolset `tool_result` without `toolset_name`, a
`screenshot`/`zoom` result without an image, an image over the size limits, a computer tool named
beside the computer toolset, a tool version without its beta flag, a thread `continue` naming an
unknown `previous_message_id` (or repeating `system`/`tools`). The reply comes from a policy
(cua.models.fakes.anthropic_policies) that reads the conversation, OCR-ing the screenshots it got.
Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from PIL import Image

from cua.models.fakes.anthropic_policies import POLICIES
from cua.models.fakes.json_http import JSONHandler

COMPUTER_BETAS = {"computer_20250124": "computer-use-2025-01-24", "computer_20251124": "computer-use-2025-11-24"}
TOOLSETS = {"computer_toolset_20260801": "computer", "browser_toolset_20260801": "browser"}
THREADS_BETA = "message-threads-2026-08-12"
IMAGE_MEDIA = {"image/png": b"\x89PNG", "image/jpeg": b"\xff\xd8", "image/gif": b"GIF8", "image/webp": b"RIFF"}
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_SIDE, MAX_SIDE_MANY = 8000, 2000  # a side; 2000 when a request holds more than 20 images
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
IMAGE_MEMBERS = {"screenshot", "zoom"}


def _keys(typed_dict: Any) -> frozenset[str]:
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def _sdk_shapes() -> tuple[frozenset[str], dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Allowed keys, read off the installed SDK's own param types: the request body, each tool entry
    type, and each toolset's `configs` (the service rejects unknown keys)."""
    from anthropic.types.beta import (
        BetaBrowserToolset20260801Param,
        BetaComputerToolset20260801Param,
        BetaToolComputerUse20250124Param,
        BetaToolComputerUse20251124Param,
        BetaToolParam,
        message_create_params,
    )
    from anthropic.types.beta.beta_browser_toolset_configs_param import BetaBrowserToolsetConfigsParam
    from anthropic.types.beta.beta_computer_toolset_configs_param import BetaComputerToolsetConfigsParam

    body = _keys(message_create_params.MessageCreateParamsBase) - {"betas"}
    tools = {"computer_20250124": _keys(BetaToolComputerUse20250124Param),
             "computer_20251124": _keys(BetaToolComputerUse20251124Param),
             "computer_toolset_20260801": _keys(BetaComputerToolset20260801Param),
             "browser_toolset_20260801": _keys(BetaBrowserToolset20260801Param), "custom": _keys(BetaToolParam)}
    configs = {"computer_toolset_20260801": _keys(BetaComputerToolsetConfigsParam),
               "browser_toolset_20260801": _keys(BetaBrowserToolsetConfigsParam)}
    return body, tools, configs


BODY_KEYS, TOOL_KEYS, CONFIG_KEYS = _sdk_shapes()


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.details = status, kind, message, details

    def body(self) -> dict[str, Any]:
        err: dict[str, Any] = {"type": self.kind, "message": self.message}
        if self.details:
            err["details"] = self.details
        return {"type": "error", "error": err}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


# A policy reads the whole conversation and answers (content blocks, stop_reason).
Policy = Callable[["Conversation"], tuple[list[dict[str, Any]], str]]


class Conversation:
    """What the policy sees: the full history (threads resolved), the tools, and helpers."""

    def __init__(self, body: dict[str, Any], messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 system: Any):
        self.body, self.messages, self.tools, self.system = body, messages, tools, system

    @property
    def toolset(self) -> str | None:
        return next((TOOLSETS[t["type"]] for t in self.tools if t.get("type") in TOOLSETS), None)

    @property
    def computer_tool(self) -> dict[str, Any] | None:
        return next((t for t in self.tools if t.get("type") in COMPUTER_BETAS), None)

    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tools if "name" in t]

    def task(self) -> str:
        first = self.messages[0]["content"]
        return first if isinstance(first, str) else " ".join(b.get("text", "") for b in first if b.get("type") == "text")

    def turns(self) -> int:
        return sum(1 for m in self.messages if m["role"] == "assistant")

    def last_user_blocks(self) -> list[dict[str, Any]]:
        content = self.messages[-1]["content"] if self.messages and self.messages[-1]["role"] == "user" else []
        return [{"type": "text", "text": content}] if isinstance(content, str) else content

    def latest_image(self) -> Image.Image | None:
        """The newest image in the last user message (in a tool_result or at top level)."""
        found = None
        for block in self.last_user_blocks():
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            for b in inner if isinstance(inner, list) else []:
                if b.get("type") == "image":
                    found = Image.open(io.BytesIO(base64.b64decode(b["source"]["data"])))
        return found

    def last_results(self) -> list[dict[str, Any]]:
        return [b for b in self.last_user_blocks() if b.get("type") == "tool_result"]


class FakeAnthropic:
    """The server state: threads, the request log, injected failures, the policy."""

    def __init__(self, policy: Policy, fail: dict[int, int] | None = None):
        self.policy = policy
        self.fail = dict(fail or {})  # request index (0-based, every POST counted) -> HTTP status to answer
        self.requests: list[dict[str, Any]] = []  # {"body", "bytes", "status", "betas", "seconds"}
        self.threads: dict[str, dict[str, Any]] = {}  # reply id -> {"messages", "system", "tools", "continued"}
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ the request
    def handle(self, headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        with self.lock:
            t0 = time.perf_counter()
            index = len(self.requests)
            entry: dict[str, Any] = {"bytes": len(raw), "status": 200, "seconds": 0.0}
            self.requests.append(entry)
            try:
                body = json.loads(raw or b"{}")
            except ValueError as e:
                raise invalid(f"request body is not valid JSON: {e}") from None
            entry["body"] = body
            if not headers.get("x-api-key") and not headers.get("authorization"):
                raise ApiError(401, "authentication_error", "x-api-key header is required")
            if not headers.get("anthropic-version"):
                raise invalid("anthropic-version header is required")
            if index in self.fail:
                status = self.fail.pop(index)
                kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
                raise ApiError(status, kind, "Overloaded" if status == 529 else "injected failure")
            betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
            entry["betas"] = sorted(betas)
            messages, tools, system, thread = self.resolve_thread(body, betas)
            check_request(body, messages, tools, betas)
            reply = self.reply(body, messages, tools, system)
            if thread is not None:
                if thread.get("type") == "continue":
                    self.threads[thread["previous_message_id"]]["continued"] = True
                self.threads[reply["id"]] = {"messages": [*messages, {"role": "assistant", "content": reply["content"]}],
                                             "system": system, "tools": tools, "continued": False}
            entry["seconds"] = time.perf_counter() - t0  # the server's own time, for the client-overhead bench
            return reply

    def resolve_thread(self, body: dict[str, Any], betas: set[str]) -> tuple[list, list, Any, dict | None]:
        thread = body.get("thread")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise invalid("messages: Field required (a list of message objects)")
        if thread is None:
            return messages, body.get("tools") or [], body.get("system"), None
        if THREADS_BETA not in betas:
            raise invalid(f"thread: this field needs the {THREADS_BETA} beta (anthropic-beta header)")
        if not isinstance(thread, dict) or thread.get("type") not in ("create", "continue"):
            raise invalid("thread: expected {\"type\": \"create\"} or {\"type\": \"continue\", \"previous_message_id\": ...}")
        if thread["type"] == "create":
            return messages, body.get("tools") or [], body.get("system"), thread
        for field in ("system", "tools"):
            if field in body:
                raise invalid(f"{field}: not allowed on a thread continue; the thread keeps the value it was created with")
        prev = thread.get("previous_message_id")
        stored = self.threads.get(prev) if isinstance(prev, str) else None
        if stored is None:
            raise ApiError(404, "not_found_error", f"thread: previous_message_id {prev!r} was not found",
                           {"error_code": "thread_not_found"})
        if stored["continued"]:
            raise ApiError(409, "invalid_request_error", f"thread: {prev!r} was already continued",
                           {"error_code": "thread_already_continued"})
        return [*stored["messages"], *messages], stored["tools"], stored["system"], thread

    def reply(self, body: dict[str, Any], messages: list, tools: list, system: Any) -> dict[str, Any]:
        content, stop = self.policy(Conversation(body, messages, tools, system))
        for block in content:
            if block.get("type") == "tool_use":
                block.setdefault("id", "toolu_" + uuid.uuid4().hex[:24])
        out_tokens = max(1, len(json.dumps(content)) // 4)
        return {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                "model": body.get("model"), "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": max(1, len(json.dumps(messages)) // 4), "output_tokens": out_tokens}}


# ---------------------------------------------------------------------- validation
def check_request(body: dict[str, Any], messages: list, tools: list, betas: set[str]) -> None:
    extra = sorted(set(body) - BODY_KEYS)
    if extra:
        raise invalid(f"{extra[0]}: Extra inputs are not permitted")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise invalid("model: Field required")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        raise invalid("max_tokens: Field required (an integer >= 1)")
    check_tools(tools, betas)
    check_messages(messages, tools)
    breakpoints = json.dumps(body).count('"cache_control"')
    if breakpoints > 4:
        raise invalid(f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}.")


def check_tools(tools: list, betas: set[str]) -> None:
    names: set[str] = set()
    families = set()
    for i, tool in enumerate(tools):
        kind = tool.get("type")
        extra = sorted(set(tool) - TOOL_KEYS.get(kind or "custom", TOOL_KEYS["custom"]))
        if extra:
            raise invalid(f"tools.{i}.{extra[0]}: Extra inputs are not permitted")
        unknown = sorted(set(tool.get("configs") or {}) - CONFIG_KEYS.get(kind, frozenset()))
        if unknown:
            raise invalid(f"tools.{i}.configs.{unknown[0]}: not a member of {kind}")
        if kind in TOOLSETS:
            if "name" in tool:
                raise invalid(f"tools.{i}: a toolset entry carries no name")
            families.add(TOOLSETS[kind])
            continue
        if kind in COMPUTER_BETAS:
            if COMPUTER_BETAS[kind] not in betas:
                raise invalid(f"tools.{i}: {kind} requires the {COMPUTER_BETAS[kind]} beta (anthropic-beta header)")
            for f in ("display_width_px", "display_height_px"):
                if not isinstance(tool.get(f), int) or tool[f] < 1:
                    raise invalid(f"tools.{i}.{f}: Field required")
            if tool.get("name") != "computer":
                raise invalid(f"tools.{i}.name: the {kind} tool must be named 'computer'")
        elif kind not in (None, "custom"):
            raise invalid(f"tools.{i}.type: unknown tool type {kind!r}")
        else:
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise invalid(f"tools.{i}.input_schema: Field required (a JSON schema of type object)")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise invalid(f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if name in names:
            raise invalid(f"tools: Tool names must be unique. Found duplicate: {name}")
        names.add(name)
    clash = families & names
    if clash:
        raise invalid(f"tools: a tool named {sorted(clash)[0]!r} cannot be declared beside the "
                      f"{sorted(clash)[0]} toolset")


def check_messages(messages: list, tools: list) -> None:
    if not messages or messages[0].get("role") != "user":
        raise invalid("messages: the first message must use the \"user\" role")
    n_images = sum(json.dumps(m).count('"type": "image"') for m in messages)
    pending: dict[str, dict[str, Any]] = {}  # tool_use id -> block, awaiting its result in the next message
    for i, msg in enumerate(messages):
        role, content = msg.get("role"), msg.get("content")
        if role not in ("user", "assistant"):
            raise invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise invalid(f"messages.{i}.content: Input should be a string or a list of blocks")
        if pending:
            if role != "user":
                raise invalid(tool_use_error(i - 1, pending))
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if blocks[: len(results)] != results:
                raise invalid(f"messages.{i}: tool_result blocks must come first in the user message after tool_use")
            for r in results:
                use = pending.pop(r.get("tool_use_id"), None)
                if use is None:
                    raise invalid(f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                                  f"{r.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                                  "`tool_use` block in the previous message.")
                check_result(i, use, r)
            if pending:
                raise invalid(tool_use_error(i - 1, pending))
        elif any(b.get("type") == "tool_result" for b in blocks):
            bad = next(b for b in blocks if b.get("type") == "tool_result")
            raise invalid(f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                          f"{bad.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                          "`tool_use` block in the previous message.")
        for b in blocks:
            check_images(i, b, n_images)
            if role == "assistant" and b.get("type") == "tool_use":
                pending[b["id"]] = b
    # Tool uses of the last assistant message may stay open only when it is the final message.
    if pending and messages[-1].get("role") != "assistant":  # pragma: no cover - covered by the loop above
        raise invalid(tool_use_error(len(messages) - 1, pending))


def tool_use_error(i: int, pending: dict[str, Any]) -> str:
    return (f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(pending)}. Each `tool_use` block must have a corresponding `tool_result` block in the "
            "next message.")


def check_result(i: int, use: dict[str, Any], result: dict[str, Any]) -> None:
    family = use.get("toolset_name")
    if family is not None and result.get("toolset_name") != family:
        raise invalid(f"messages.{i}: the tool_result for toolset tool_use {use['id']} must carry "
                      f"toolset_name {family!r}")
    content = result.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    if family and use.get("name") in IMAGE_MEMBERS and not result.get("is_error"):
        if not any(b.get("type") == "image" for b in blocks):
            raise invalid(f"messages.{i}: the result of {family} member {use['name']!r} ({use['id']}) must hold "
                          "an image block")


def check_images(i: int, block: dict[str, Any], n_images: int) -> None:
    inner = block.get("content") if block.get("type") == "tool_result" else [block]
    for b in inner if isinstance(inner, list) else []:
        if b.get("type") != "image":
            continue
        src = b.get("source") or {}
        if src.get("type") != "base64" or src.get("media_type") not in IMAGE_MEDIA:
            raise invalid(f"messages.{i}: image source must be base64 with media_type one of {sorted(IMAGE_MEDIA)}")
        raw = base64.b64decode(src.get("data", ""), validate=True)
        if len(src.get("data", "")) > MAX_IMAGE_BYTES:
            raise invalid(f"messages.{i}: image exceeds 5 MB maximum: {len(src['data'])} bytes > {MAX_IMAGE_BYTES} bytes")
        if not raw.startswith(IMAGE_MEDIA[src["media_type"]]):
            raise invalid(f"messages.{i}: Image does not match the provided media type {src['media_type']}")
        w, h = Image.open(io.BytesIO(raw)).size
        limit = MAX_SIDE_MANY if n_images > 20 else MAX_SIDE
        if max(w, h) > limit:
            raise invalid(f"messages.{i}: image dimensions exceed max allowed size for {'many-image' if n_images > 20 else 'single-image'} "
                          f"requests: {limit} pixels (got {w}x{h})")


# ---------------------------------------------------------------------- HTTP
def make_handler(state: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        retry_statuses = (429, 529)

        def extra_headers(self) -> dict[str, str]:
            return {"request-id": "req_" + uuid.uuid4().hex[:20]}

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.path.split("?")[0] != "/v1/messages":
                self._send(404, ApiError(404, "not_found_error", f"Not found: {self.path}").body())
                return
            try:
                self._send(200, state.handle({k.lower(): v for k, v in self.headers.items()}, raw))
            except ApiError as e:
                with state.lock:
                    state.requests[-1]["status"] = e.status
                    state.requests[-1]["error"] = e.message
                self._send(e.status, e.body())

    return Handler


class FakeAnthropicServer:
    """`with FakeAnthropicServer(policy) as srv: os.environ["ANTHROPIC_BASE_URL"] = srv.base_url`."""

    def __init__(self, policy: Policy, port: int = 0, fail: dict[int, int] | None = None):
        self.state = FakeAnthropic(policy, fail=fail)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(self.state))
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeAnthropicServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fake-anthropic", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A strict fake of Anthropic's Messages API on 127.0.0.1.",
                                 epilog="Example: python -m cua.models.fakes.anthropic_fake --policy find_replace")
    ap.add_argument("--policy", default="find_replace", choices=sorted(POLICIES))
    ap.add_argument("--port", type=int, default=8021)
    args = ap.parse_args(argv)
    with FakeAnthropicServer(POLICIES[args.policy](), port=args.port) as srv:
        print(f"ANTHROPIC_BASE_URL={srv.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
