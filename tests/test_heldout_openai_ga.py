"""An independent check of the OpenAI GA `computer` tool path, written from the SDK's types and the
issue text only (not from cua's own fake): a strict Responses endpoint that chains turns with
previous_response_id, sends batched `actions`, demands one computer_call_output per call with the
same call_id, and decides its later moves by reading the screenshots it is sent."""

from __future__ import annotations

import base64
import io
import json
import uuid

from PIL import Image

from cua.perception.ocr import ocr
from tests.heldout_fixtures import cua_run, json_endpoint

MAX_SIDE = 4096


class Strict:
    def __init__(self) -> None:
        self.responses: dict[str, dict] = {}  # id -> {"open_call": call_id or None}
        self.turn = 0
        self.errors: list[str] = []
        self.log: list[dict] = []

    def fail(self, msg: str) -> tuple[int, dict]:
        self.errors.append(msg)
        return 400, {"error": {"message": msg, "type": "invalid_request_error", "param": None, "code": None}}

    def handle(self, body: dict) -> tuple[int, dict]:
        self.log.append(body)
        tools = body.get("tools") or []
        if not any(t.get("type") == "computer" for t in tools):
            return self.fail("tools must include {'type': 'computer'}")
        if any(t.get("type") == "computer" and set(t) - {"type"} for t in tools):
            return self.fail("the GA computer tool takes no display size or environment")
        items = body.get("input")
        items = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])
        prev = body.get("previous_response_id")
        screenshot = None
        if prev is not None:
            if prev not in self.responses:
                return self.fail(f"Previous response with id '{prev}' not found.")
            open_call = self.responses[prev]["open_call"]
            outs = [i for i in items if i.get("type") == "computer_call_output"]
            if open_call and [o.get("call_id") for o in outs] != [open_call]:
                return self.fail(f"No tool output found for computer call {open_call}.")
            for o in outs:
                out = o.get("output") or {}
                if out.get("type") != "computer_screenshot" or not str(out.get("image_url", "")).startswith("data:image/"):
                    return self.fail("computer_call_output.output must be a computer_screenshot with an image_url")
                data = base64.b64decode(out["image_url"].split(",", 1)[1])
                screenshot = Image.open(io.BytesIO(data)).convert("RGB")
                if max(screenshot.size) > MAX_SIDE:
                    return self.fail("image too large")
        elif self.turn:
            return self.fail("a later turn arrived without previous_response_id")
        self.turn += 1
        return 200, self.respond(body, screenshot)

    def respond(self, body: dict, shot: Image.Image | None) -> dict:
        rid, call_id = f"resp_{uuid.uuid4().hex}", f"call_{uuid.uuid4().hex[:12]}"
        words = {e.name.strip(): e.bbox for e in ocr(shot, words=True)} if shot is not None else {}
        def at(prefix: str):
            for name, (x, y, w, h) in words.items():
                if name.lower().startswith(prefix.lower()):
                    return {"x": int(x + w / 2), "y": int(y + h / 2)}
            return None
        actions = None
        if shot is None:
            actions = [{"type": "screenshot"}]
        elif at("Replace All") or at("Replace with"):
            actions = None  # the dialog is open: finish
        elif at("Find and Replace"):
            actions = [{"type": "click", "button": "left", **at("Find and Replace")}, {"type": "wait"}]
        elif at("Search"):
            actions = [{"type": "move", **at("Search")}, {"type": "click", "button": "left", **at("Search")}]
        output = [{"type": "reasoning", "id": f"rs_{uuid.uuid4().hex[:10]}", "summary": []}]
        if actions is None:
            output.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:8]}", "role": "assistant",
                           "status": "completed", "content": [{"type": "output_text", "annotations": [],
                                                               "text": "The Find and Replace dialog is open."}]})
            self.responses[rid] = {"open_call": None}
        else:
            output.append({"type": "computer_call", "id": f"cu_{uuid.uuid4().hex[:8]}", "call_id": call_id,
                           "actions": actions, "pending_safety_checks": [], "status": "completed"})
            self.responses[rid] = {"open_call": call_id}
        return {"id": rid, "object": "response", "created_at": 0, "model": body.get("model"), "status": "completed",
                "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": body.get("tools"),
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                          "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def test_ga_computer_tool_opens_find_and_replace(tmp_path):
    state = Strict()
    with json_endpoint("/responses", state.handle, {"error": {"message": "no such route",
                                                              "type": "invalid_request_error"}}) as url:
        r = cua_run("Open the Find and Replace dialog", "openai:gpt-5.4", tmp_path / "run",
                    {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-test"})
    assert not state.errors, state.errors
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["outcome"] == "success"
    assert state.turn >= 4
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert "computer" in json.dumps(meta)
