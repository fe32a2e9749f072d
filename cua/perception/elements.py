"""What perception produces: UI elements with their source, and the Observation that carries them."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Literal

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

Source = Literal["a11y", "dom", "ocr", "vision"]
BBox = tuple[int, int, int, int]  # x, y, w, h in screen pixels


class UIElement(BaseModel):
    """One element on screen; `signature` re-finds it across observations, `id` only within one."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(..., description="Stable within one observation, e.g. 'e12'.")
    role: str = Field("unknown", description="Normalised role: 'push button', 'menu item', 'text', ...")
    name: str = Field("", description="Accessible name or visible text.")
    bbox: BBox = Field(..., description="x, y, w, h in screen pixels.")
    source: Source
    states: list[str] = Field(default_factory=list, description="focused, checked, enabled, expanded, ...")
    path: list[str] = Field(default_factory=list, description="Ancestors as 'role:name', root first.")
    signature: str = ""
    confidence: float = 1.0
    value: str | None = None
    attrs: dict[str, Any] = Field(default_factory=dict, description="Backend extras (DOM selector, ...).")

    def model_post_init(self, _ctx: Any) -> None:
        if not self.signature:
            self.signature = make_signature(self.role, self.name, self.path)

    @property
    def center(self) -> tuple[int, int]:
        x, y, w, h = self.bbox
        return x + w // 2, y + h // 2

    def has_state(self, state: str) -> bool:
        return state in self.states

    def contains(self, x: float, y: float) -> bool:
        bx, by, bw, bh = self.bbox
        return bx <= x < bx + bw and by <= y < by + bh


def make_signature(role: str, name: str, path: list[str]) -> str:
    """role + name + ancestor path: stable across observations of the same UI."""
    anc = "/".join(p for p in path if p)
    return f"{anc}/{role}:{name}" if anc else f"{role}:{name}"


STRUCTURED_SOURCES = ("a11y", "dom")


class Observation(BaseModel):
    """One look at the screen: the image, the elements found on it, and where it came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    screenshot: Any = Field(None, description="PIL.Image or a path to a PNG.")
    elements: list[UIElement] = Field(default_factory=list)
    window_title: str = ""
    app: str = ""
    url: str | None = None
    size: tuple[int, int] = (0, 0)
    timestamp: float = Field(default_factory=time.time)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per perception stage.")
    env: str = ""

    def image(self) -> Image.Image:
        if isinstance(self.screenshot, Image.Image):
            return self.screenshot
        if self.screenshot is None:
            raise ValueError("this observation has no screenshot")
        return Image.open(self.screenshot)

    def element(self, element_id: str) -> UIElement:
        for e in self.elements:
            if e.id == element_id:
                return e
        known = ", ".join(e.id for e in self.elements[:20])
        raise KeyError(f"no element {element_id!r} in this observation (known: {known}...)")

    def by_signature(self, signature: str) -> UIElement | None:
        return next((e for e in self.elements if e.signature == signature), None)

    def structural(self) -> list[UIElement]:
        """The elements that say what the UI is: the accessibility tree's or the DOM's where the screen has
        them (OCR and the detector then add what the pixels showed at one instant: a closing menu, a
        tooltip, a misread digit), else all of them (an app without a tree)."""
        tree = [e for e in self.elements if e.source in STRUCTURED_SOURCES]
        return tree or list(self.elements)

    def image_hash(self) -> str:
        img = self.image()
        return hashlib.blake2b(img.tobytes(), digest_size=12).hexdigest()

    def elements_json(self) -> list[dict]:
        return [e.model_dump(mode="json") for e in self.elements]

    def save(self, out: Path | str, stem: str = "observation") -> dict[str, Path]:
        """Write `<stem>.png` and `<stem>.json` (elements, window, timings) under `out`."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        png = out / f"{stem}.png"
        self.image().save(png)
        meta = self.model_dump(mode="json", exclude={"screenshot"})
        meta["screenshot"] = png.name
        js = out / f"{stem}.json"
        js.write_text(json.dumps(meta, indent=1))
        return {"png": png, "json": js}
