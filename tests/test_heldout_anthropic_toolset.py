"""An independent check of the Anthropic `computer_toolset_20260801` path, written from the SDK's types
and the issue text only (not from cua's own fake): a strict Messages endpoint with threads (create,
then continue with only the new messages) or without them (the whole history each turn), whose
member tool_use blocks must each get a tool_result carrying `toolset_name`, and whose later moves
depend on the screenshots it is sent."""

from __future__ import annotations

import base64
import io
import json
import uuid

import pytest
from PIL import Image

from cua.perception.ocr import ocr
from tests.heldout_fixtures import cua_run, json_endpoint


class Strict:
    def __init__(self, threaded: bool) -> None:
        self.threaded = threaded
        self.pending: dict[str, dict] = {}  # message id -> {"tool_use_id", "name"} awaiting its result
        self.last_id: str | None = None
        self.turn = 0
        self.errors: list[str] = []
        self.shot: Image.Image | None = None
        self.plan = ["screenshot", "click:Search", "screenshot", "click:Find and Replace", "screenshot", "end"]

    def fail(self, msg: str) -> tuple[int, dict]:
        self.errors.append(msg)
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}

    def handle(self, body: dict) -> tuple[int, dict]:
        tools = body.get("tools") or []
        held = self.threaded and self.turn and "tools" not in body  # a continued thread keeps its tools
        sets = [t for t in tools if t.get("type") == "computer_toolset_20260801"]
        if not held and (len(sets) != 1 or "name" in sets[0]):
            return self.fail("tools needs exactly one computer_toolset_20260801 entry, without a name")
        if any(str(t.get("type", "")).startswith("computer_20") or t.get("name") == "computer" for t in tools):
            return self.fail("a computer tool cannot be declared beside the computer toolset")
        msgs = body.get("messages") or []
        thread = body.get("thread")
        if self.threaded:
            if self.turn == 0 and (thread or {}).get("type") != "create":
                return self.fail("expected thread {'type': 'create'} on the first turn")
            if self.turn and ((thread or {}).get("type") != "continue"
                              or thread.get("previous_message_id") != self.last_id):
                return self.fail(f"unknown previous_message_id {thread and thread.get('previous_message_id')!r}")
            if self.turn and len(msgs) != 1:
                return self.fail("a continued thread takes only the new messages")
        elif thread:
            return self.fail("this endpoint has no threads")
        if self.turn:
            want = self.pending.pop(self.last_id, None)
            last = msgs[-1] if msgs else {}
            blocks = last.get("content") if isinstance(last.get("content"), list) else []
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if last.get("role") != "user" or [r.get("tool_use_id") for r in results] != [want["tool_use_id"]]:
                return self.fail(f"tool_use ids were found without tool_result blocks: {want['tool_use_id']}")
            res = results[0]
            if res.get("toolset_name") != "computer":
                return self.fail("a toolset member's tool_result needs toolset_name 'computer'")
            content = res.get("content") if isinstance(res.get("content"), list) else []
            images = [c for c in content if c.get("type") == "image"]
            if want["name"] == "screenshot":
                if not images:
                    return self.fail("a screenshot tool_result must carry an image")
                data = base64.b64decode(images[0]["source"]["data"])
                self.shot = Image.open(io.BytesIO(data)).convert("RGB")
        self.turn += 1
        return 200, self.respond(body)

    def respond(self, body: dict) -> dict:
        mid = f"msg_{uuid.uuid4().hex[:16]}"
        step = self.plan.pop(0) if self.plan else "end"
        if step.startswith("click:"):
            words = {e.name.strip(): e.bbox for e in ocr(self.shot, words=True)}
            hit = next(((x + w // 2, y + h // 2) for n, (x, y, w, h) in words.items()
                        if n.lower().startswith(step[6:].lower())), None)
            if hit is None:
                step = "end"
        if step == "end":
            ok = any(e.name.startswith("Replace") for e in ocr(self.shot, words=True)) if self.shot else False
            content = [{"type": "text", "text": "Find and Replace is open." if ok else "I could not do it."}]
            stop = "end_turn"
        else:
            tid = f"toolu_{uuid.uuid4().hex[:12]}"
            name, inp = ("screenshot", {}) if step == "screenshot" else ("left_click", {"coordinate": list(hit)})
            content = [{"type": "tool_use", "id": tid, "name": name, "input": inp, "toolset_name": "computer"}]
            self.pending[mid] = {"tool_use_id": tid, "name": name}
            stop = "tool_use"
        self.last_id = mid
        return {"id": mid, "type": "message", "role": "assistant", "model": body.get("model"), "content": content,
                "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 4}}


@pytest.mark.parametrize("threaded", [True, False], ids=["thread", "no-thread"])
def test_toolset_opens_find_and_replace(tmp_path, threaded):
    state = Strict(threaded)
    with json_endpoint("/v1/messages", state.handle, {"type": "error", "error": {"type": "not_found_error",
                                                                                 "message": "no such route"}}) as url:
        r = cua_run("Open the Find and Replace dialog", "anthropic:claude-sonnet-5-5", tmp_path / "run",
                    {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"},
                    *([] if threaded else ["--no-thread"]))
    assert not state.errors, state.errors
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["outcome"] == "success"
    assert state.turn == 6
