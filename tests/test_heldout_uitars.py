"""An independent check of the UI-TARS-1.5 path on chat completions, written from UI-TARS's published
conventions (not from cua's own fake): the model answers `Thought: ...\\nAction: click(start_box=...)`
in the coordinate space of the smart-resized image (factor 28), and finishes with `finished(...)`."""

from __future__ import annotations

import base64
import io
import json
import math

from PIL import Image

from cua.perception.ocr import ocr
from tests.heldout_fixtures import cua_run, json_endpoint


def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 100 * 28 * 28,
                 max_pixels: int = 16384 * 28 * 28) -> tuple[int, int]:
    h_bar, w_bar = max(factor, round(height / factor) * factor), max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar, w_bar = math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar, w_bar = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class Policy:
    def __init__(self) -> None:
        self.turn = 0
        self.errors: list[str] = []
        self.max_images = 0

    def handle(self, body: dict) -> tuple[int, dict]:
        msgs = body.get("messages") or []
        if not msgs or msgs[-1].get("role") != "user":
            return self.fail("the last message must be the user's")
        images = [p for m in msgs if isinstance(m.get("content"), list) for p in m["content"]
                  if p.get("type") == "image_url"]
        self.max_images = max(self.max_images, len(images))
        last = msgs[-1]["content"] if isinstance(msgs[-1]["content"], list) else []
        shots = [p for p in last if p.get("type") == "image_url"]
        if not shots:
            return self.fail("each turn must carry the current screenshot")
        url = shots[-1]["image_url"]["url"]
        img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
        self.turn += 1
        words = {e.name.strip(): e.bbox for e in ocr(img, words=True)}
        h_bar, w_bar = smart_resize(img.height, img.width)

        def click(prefix: str) -> str | None:
            for name, (x, y, w, h) in words.items():
                if name.lower().startswith(prefix.lower()):
                    mx, my = round((x + w / 2) / img.width * w_bar), round((y + h / 2) / img.height * h_bar)
                    return f"click(start_box='<|box_start|>({mx},{my})<|box_end|>')"
            return None

        lines = [e.name.strip().lower() for e in ocr(img)]
        if any(n.startswith(("replace with", "replace all")) for n in lines):  # the dialog, not the menu item
            action = "finished(content='The Find and Replace dialog is open.')"
        else:
            action = click("Find and Replace") or click("Search") or "wait()"
        text = f"Thought: step {self.turn}.\nAction: {action}"
        return 200, {"id": f"chatcmpl-{self.turn}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}

    def fail(self, msg: str) -> tuple[int, dict]:
        self.errors.append(msg)
        return 400, {"error": {"message": msg, "type": "invalid_request_error", "param": None, "code": None}}


def test_uitars_opens_find_and_replace(tmp_path):
    policy = Policy()
    with json_endpoint("/chat/completions", policy.handle, {"error": {}}) as url:
        r = cua_run("Open the Find and Replace dialog", "openai:ui-tars-1.5-7b", tmp_path / "run",
                    {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "x"}, max_steps=10)
    assert not policy.errors, policy.errors
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["outcome"] == "success"
    assert 3 <= policy.turn <= 6
    assert policy.max_images <= 4  # older screenshots are pruned (default: the last 3 kept)
