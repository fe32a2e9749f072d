"""A strict fake of the OpenAI Responses API with the computer tool, served over real HTTP (127.0.0.1).

The official SDK talks to it unchanged (OPENAI_BASE_URL). It checks what the real service checks and
answers errors in its shape (HTTP 400, {"error": {"message", "type", "param", "code"}}): every input
item against the SDK's own param type; the computer tool the model takes (`computer_use_preview` with
a display size for computer-use-preview, bare `computer` for GA models); an unknown
`previous_response_id`; a call left without its output, an output whose `call_id` matches no call, a
call answered twice (a GA batch gets ONE output); unacknowledged safety checks; replayed items it
never issued, reasoning items replayed without their `encrypted_content` under store=false, a call
replayed without the reasoning item that preceded it; images over the size limit. Its "model" is a
policy (cua.models.fakes.screen_policy) reading the newest screenshot the client sent.

    with OpenAIFake(FindReplacePolicy()) as fake: ...  # fake.base_url, fake.requests
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

from cua.models.fakes.json_http import JSONHandler
from cua.models.fakes.screen_policy import Move, Seen

CALLS = ("computer_call", "function_call")
OUTPUTS = {"computer_call_output": "computer_call", "function_call_output": "function_call"}


class ApiError(Exception):
    def __init__(self, message: str, param: str | None = None, code: str | None = None, status: int = 400,
                 kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.body = status, {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _new(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


_ADAPTERS: dict[str, Any] = {}


def _adapter(kind: str) -> Any:
    """The SDK's own param type for one input item kind, as a pydantic validator (built once)."""
    if kind not in _ADAPTERS:
        from pydantic import TypeAdapter

        from openai.types.responses import response_input_item_param as p
        from openai.types.responses.easy_input_message_param import EasyInputMessageParam
        from openai.types.responses.response_computer_tool_call_param import ResponseComputerToolCallParam
        from openai.types.responses.response_function_tool_call_param import ResponseFunctionToolCallParam
        from openai.types.responses.response_output_message_param import ResponseOutputMessageParam
        from openai.types.responses.response_reasoning_item_param import ResponseReasoningItemParam
        from openai.types.responses.tool_param import ToolParam

        types = {"user": EasyInputMessageParam, "assistant": ResponseOutputMessageParam, "tool": ToolParam,
                 "computer_call": ResponseComputerToolCallParam, "function_call": ResponseFunctionToolCallParam,
                 "reasoning": ResponseReasoningItemParam, "computer_call_output": p.ComputerCallOutput,
                 "function_call_output": p.FunctionCallOutput}
        if kind not in types:
            raise ApiError(f"Invalid value: '{kind}'. This fake accepts item types {sorted(types)}.", "input")
        _ADAPTERS[kind] = TypeAdapter(types[kind])
    return _ADAPTERS[kind]


def _validate(kind: str, value: Any, where: str) -> None:
    from pydantic import ValidationError

    try:
        _adapter(kind).validate_python(value)
    except ValidationError as e:
        # In a union, drop the members whose `type` literal did not match; then the deepest missing field.
        errs = e.errors()
        wrong = {x["loc"][:-1] for x in errs if x["type"] == "literal_error" and x["loc"][-1] == "type"}
        errs = [x for x in errs if not any(x["loc"][:len(w)] == w for w in wrong)] or errs
        err = min(errs, key=lambda x: (x["type"] != "missing", -len(x["loc"])))
        loc = ".".join(str(x) for x in err["loc"] if not str(x)[:1].isupper() and "[" not in str(x))
        raise ApiError(f"Invalid {where}: {loc}: {err['msg']}", where) from None


def _kind(item: dict[str, Any]) -> str:
    t = item.get("type", "message")
    return item.get("role", "user") if t == "message" else t


def _image_urls(item: dict[str, Any]) -> list[str]:
    t = item.get("type", "message")
    if t == "computer_call_output":
        return [(item.get("output") or {}).get("image_url", "")]
    parts = item.get("content") if t == "message" else item.get("output") if t == "function_call_output" else None
    return [p.get("image_url", "") for p in parts if isinstance(p, dict) and p.get("type") == "input_image"] \
        if isinstance(parts, list) else []


def _first_words(item: dict[str, Any]) -> str:
    """A replayed conversation's identity: the text of its first item (its image may have been pruned)."""
    content = item.get("content")
    if isinstance(content, list):
        return next((p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "input_text"), "")
    return str(content)[:4096]


def _tokens(items: list[dict[str, Any]]) -> int:
    """A rough input token count: text at 4 characters a token, 765 a screenshot (a 1024x768 at high detail)."""
    images = sum(len(_image_urls(it)) for it in items)
    text = sum(len(json.dumps(it)) - sum(len(u) for u in _image_urls(it)) for it in items)
    return text // 4 + 765 * images


def decode_image(url: str) -> Image.Image:
    if not url.startswith("data:image/") or ";base64," not in url:
        raise ApiError("Invalid image_url: this fake takes base64 data URLs (data:image/png;base64,...).", "input")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


class OpenAIFake:
    """The server and its state; `policy(Seen) -> [Move]` plays the model. With `factory(model) -> policy`
    instead, each conversation gets a fresh policy (for a server that serves many runs)."""

    def __init__(self, policy: Callable[[Seen], list[Move]] | None = None, *,
                 factory: Callable[[str], Callable[[Seen], list[Move]]] | None = None, max_image: tuple[int, int] = (1920, 1200),
                 max_image_bytes: int = 20 * 2**20, safety_check_on: set[int] | None = None,
                 rate_limit_on: set[int] | None = None, incomplete_on: set[int] | None = None, port: int = 0):
        if (policy is None) == (factory is None):
            raise ValueError("give a policy or a factory")
        self.policy, self.factory = policy, factory
        self.conversation_of: dict[str, str] = {}  # response id -> conversation key
        self.policies: dict[str, Callable[[Seen], list[Move]]] = {}
        self.turns: dict[str, int] = {}
        self.max_image, self.max_image_bytes = max_image, max_image_bytes
        self.safety_check_on = safety_check_on or set()  # turns (1-based, per conversation) whose call has a check
        self.rate_limit_on = rate_limit_on or set()  # request numbers (1-based) answered 429 once
        self.incomplete_on = incomplete_on or set()  # turns cut off at max_output_tokens
        self.stored: dict[str, list[dict[str, Any]]] = {}  # response id -> the whole conversation
        self.issued: dict[str, dict[str, Any]] = {}  # item id -> the item as we sent it
        self.reasoning_of: dict[str, str] = {}  # call item id -> the reasoning item id before it
        self.requests: list[dict[str, Any]] = []  # every request: body, bytes, status, seconds
        self.responses = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> OpenAIFake:
        threading.Thread(target=self.httpd.serve_forever, name="openai-fake", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- checks ---------------------------------------------------------------------------------
    def _check_tools(self, model: str, tools: list[Any]) -> list[str]:
        want = "computer_use_preview" if model.startswith("computer-use") else "computer"
        computer = [t for t in tools if isinstance(t, dict) and t.get("type") in ("computer", "computer_use_preview")]
        for i, t in enumerate(tools):
            _validate("tool", t, f"tools[{i}]")
        if len(computer) != 1 or computer[0]["type"] != want:
            raise ApiError(f"Model {model} takes exactly one computer tool of type '{want}'.", "tools")
        extra = set(computer[0]) - ({"type"} if want == "computer" else
                                     {"type", "display_width", "display_height", "environment"})
        if extra:
            raise ApiError(f"Unknown parameter: 'tools[{tools.index(computer[0])}].{sorted(extra)[0]}'.", "tools")
        return [t["name"] for t in tools if isinstance(t, dict) and t.get("type") == "function"]

    def _check_image(self, url: str) -> Image.Image:
        if len(url) * 3 // 4 > self.max_image_bytes:
            raise ApiError(f"Image too large: over {self.max_image_bytes} bytes.", "input", "image_too_large")
        image = decode_image(url)
        if image.width > self.max_image[0] or image.height > self.max_image[1]:
            raise ApiError(f"Image too large: {image.width}x{image.height} exceeds {self.max_image[0]}x"
                           f"{self.max_image[1]}; scale screenshots down.", "input", "image_too_large")
        return image

    def _check_replayed(self, item: dict[str, Any], seen_ids: set[str], store: bool) -> None:
        iid = item.get("id")
        if iid is None:
            return
        if iid in seen_ids:
            raise ApiError(f"Duplicate item found with id {iid}. Remove duplicate items from your input and try "
                           "again.", "input")
        seen_ids.add(iid)
        kind = item.get("type", "message")
        if kind not in ("reasoning", "message", *CALLS):
            return
        ours = self.issued.get(iid)
        if ours is None or (kind in CALLS and ours.get("call_id") != item.get("call_id")):
            raise ApiError(f"Item with id '{iid}' not found.", "input")
        if kind == "reasoning" and not store and item.get("encrypted_content") != ours.get("encrypted_content"):
            raise ApiError(f"Item with id '{iid}' not found. Items are not persisted when `store` is set to false. "
                           "Try again with `store` set to true, or remove this item from your input.", "input")

    def _check_conversation(self, convo: list[dict[str, Any]]) -> None:
        """Every call answered exactly once, after it, under its call_id, with its safety checks acknowledged."""
        calls: dict[str, dict[str, Any]] = {}
        answered: dict[str, int] = {}
        ids = [it.get("id") for it in convo]
        for n, item in enumerate(convo):
            t = item.get("type")
            if t in CALLS:
                calls[item["call_id"]] = item
                need = self.reasoning_of.get(item.get("id", ""))
                if need and need not in ids[:n]:
                    raise ApiError(f"Item '{item['id']}' of type '{t}' was provided without its required "
                                   f"'reasoning' item: '{need}'.", "input")
            elif t in OUTPUTS:
                call = calls.get(item.get("call_id", ""))
                if call is None or call["type"] != OUTPUTS[t]:
                    raise ApiError(f"No tool call found for {OUTPUTS[t].replace('_', ' ')} output with call_id "
                                   f"{item.get('call_id')}.", "input")
                answered[call["call_id"]] = answered.get(call["call_id"], 0) + 1
                if answered[call["call_id"]] > 1:
                    raise ApiError(f"Duplicate output for call_id {call['call_id']}: a {t[:-7]} is answered by "
                                   "exactly one output (a batch of actions included).", "input")
                pending = {c["id"] for c in call.get("pending_safety_checks") or []}
                acked = {c.get("id") for c in item.get("acknowledged_safety_checks") or []}
                if pending - acked:
                    raise ApiError(f"Safety checks {sorted(pending - acked)} of call {call['call_id']} were not "
                                   "acknowledged: send them in acknowledged_safety_checks.", "input")
        for cid, call in calls.items():
            if cid not in answered:
                raise ApiError(f"No tool output found for {call['type'].replace('_', ' ')} {cid}.", "input")

    # -- one request ----------------------------------------------------------------------------
    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        model, items = body.get("model"), body.get("input")
        if not isinstance(model, str) or not model:
            raise ApiError("Missing required parameter: 'model'.", "model")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list) or not items:
            raise ApiError("Missing required parameter: 'input'.", "input")
        functions = self._check_tools(model, body.get("tools") or [])
        if model.startswith("computer-use") and body.get("truncation") != "auto":
            raise ApiError("truncation must be 'auto' for computer-use-preview.", "truncation")
        store = body.get("store") is not False
        prev = body.get("previous_response_id")
        if prev is not None and prev not in self.stored:
            raise ApiError(f"Previous response with id '{prev}' not found.", "previous_response_id",
                           "previous_response_not_found")
        history = list(self.stored.get(prev, [])) if prev else []
        seen_ids = {it["id"] for it in history if it.get("id")}
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ApiError(f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]")
            _validate(_kind(item), item, f"input[{i}]")
            self._check_replayed(item, seen_ids, store)
        convo = history + items
        self._check_conversation(convo)
        shot, results = None, []
        for item in items:
            for url in _image_urls(item):
                shot = self._check_image(url)
            if item.get("type") == "function_call_output":
                out = item.get("output")
                results.append(out if isinstance(out, str) else " ".join(
                    p.get("text", "") for p in out if isinstance(p, dict)))
        self.responses += 1
        conv = self.conversation_of.get(prev or "") or _first_words(items[0])
        self.turns[conv] = self.turns.get(conv, 0) + 1
        if self.factory is not None and conv not in self.policies:
            self.policies[conv] = self.factory(model)
        policy = self.policies.get(conv) or self.policy
        moves = policy(Seen(shot, functions, results, self.turns[conv]))  # type: ignore[misc]
        output = self._items(moves, model, body, self.turns[conv])
        rid = _new("resp")
        self.conversation_of[rid] = conv
        if store:
            self.stored[rid] = convo + output
        status, details = "completed", None
        if self.turns[conv] in self.incomplete_on:
            status, details, output = "incomplete", {"reason": "max_output_tokens"}, [
                it for it in output if it["type"] == "reasoning"]
        return {"id": rid, "object": "response", "created_at": int(time.time()), "status": status,
                "incomplete_details": details, "error": None, "model": model, "output": output,
                "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)), "tool_choice": "auto",
                "tools": body.get("tools") or [], "previous_response_id": prev, "store": store,
                "usage": {"input_tokens": (tokens := _tokens(convo)), "output_tokens": 20, "total_tokens": tokens + 20,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 10}}}

    def _items(self, moves: list[Move], model: str, body: dict[str, Any], turn: int) -> list[dict[str, Any]]:
        """The policy's moves as output items: reasoning, then a message, a function call or a computer call."""
        rs = {"type": "reasoning", "id": _new("rs"), "summary": [{"type": "summary_text", "text": "Looking."}]}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            rs["encrypted_content"] = "enc_" + uuid.uuid4().hex
        out = [rs]
        if moves[0].kind == "refuse":
            out.append({"type": "message", "id": _new("msg"), "role": "assistant", "status": "completed",
                        "content": [{"type": "refusal", "refusal": moves[0].text}]})
        elif moves[0].kind == "say":
            out.append({"type": "message", "id": _new("msg"), "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": moves[0].text, "annotations": []}]})
        elif moves[0].kind == "skill":
            out.append({"type": "function_call", "id": _new("fc"), "call_id": _new("call"), "name": moves[0].name,
                        "arguments": json.dumps(moves[0].args), "status": "completed"})
        else:
            actions = [_action(m) for m in moves]
            call: dict[str, Any] = {"type": "computer_call", "id": _new("cu"), "call_id": _new("call"),
                                    "status": "completed", "pending_safety_checks": []}
            if model.startswith("computer-use"):
                if len(actions) != 1:
                    raise ApiError("fake policy error: the preview tool carries one action per call", status=500,
                                   kind="server_error")
                call["action"] = actions[0]
            else:
                call["actions"] = actions
            if turn in self.safety_check_on:
                call["pending_safety_checks"] = [{"id": _new("cu_sc"), "code": "malicious_instructions",
                                                  "message": "The screen may contain instructions to the agent."}]
            out.append(call)
            self.reasoning_of[call["id"]] = rs["id"]
        for it in out:
            self.issued[it["id"]] = it
        return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                t0 = time.monotonic()
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.split("?")[0].rstrip("/") != "/v1/responses":
                    return self._send(404, {"error": {"message": f"Invalid URL (POST {self.path})",
                                                      "type": "invalid_request_error", "param": None, "code": None}})
                with fake.lock:
                    rec: dict[str, Any] = {"bytes": len(raw), "status": 200}
                    fake.requests.append(rec)
                    try:
                        body = json.loads(raw or b"{}")
                        rec["body"] = body
                        if len(fake.requests) in fake.rate_limit_on:
                            raise ApiError("Rate limit reached for requests. Please try again in 0s.", None,
                                           "rate_limit_exceeded", status=429, kind="requests")
                        code, payload = 200, fake.respond(body)
                    except json.JSONDecodeError:
                        code, payload = 400, ApiError("We could not parse the JSON body of your request.").body
                    except ApiError as e:
                        code, payload = e.status, e.body
                    except Exception as e:  # noqa: BLE001 - a policy bug answers 500, as a server would
                        code, payload = 500, ApiError(f"fake server error: {type(e).__name__}: {e}", status=500,
                                                      kind="server_error").body
                    rec["status"], rec["seconds"] = code, time.monotonic() - t0
                    rec["response_id"] = payload.get("id")
                    if code != 200:
                        rec["error"] = payload["error"]["message"]
                self._send(code, payload)

        return Handler


def _action(m: Move) -> dict[str, Any]:
    if m.kind == "click":
        return {"type": "click", "button": "left", "x": m.x, "y": m.y}
    if m.kind == "move":
        return {"type": "move", "x": m.x, "y": m.y}
    if m.kind == "key":
        return {"type": "keypress", "keys": m.keys}
    if m.kind == "type":
        return {"type": "type", "text": m.text}
    if m.kind in ("wait", "screenshot"):
        return {"type": m.kind}
    raise ValueError(f"no computer action for move {m.kind!r}")



def main(argv: list[str] | None = None) -> int:
    """Serve the strict fake with the Find and Replace policy, for trying `cua run` without a key."""
    import argparse

    from cua.models.fakes.screen_policy import FindReplacePolicy

    ap = argparse.ArgumentParser(description="Strict fake OpenAI Responses endpoint (computer tool), 127.0.0.1 only.",
                                 epilog="Example: python -m cua.models.fakes.openai_fake --port 8012")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0 = any free port)")
    ap.add_argument("--safety-check", action="store_true", help="put a pending safety check on the first call")
    args = ap.parse_args(argv)
    # One action per call for computer-use-preview, batches for GA models; a fresh policy per conversation.
    fake = OpenAIFake(factory=lambda model: FindReplacePolicy(batch=not model.startswith("computer-use")),
                      safety_check_on={1} if args.safety_check else set(), port=args.port)
    print(f"listening on {fake.base_url}", flush=True)
    try:
        fake.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake.httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
