"""One reader for demonstrations: a recording session or a trajectory directory -> ordered steps.

Export and replay both read through `load_demo`, so they work on recordings (complete or cut
short by a kill) and on agent/exported trajectories alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from cua.actions import Action, ActionParseError, action_from_dict
from recorder.store import RecordingError

SKIP_KINDS = {"done", "fail", "wait"}


@dataclass
class DemoStep:
    index: int
    action: Action
    element: dict[str, Any] | None = None
    to_element: dict[str, Any] | None = None
    window: dict[str, Any] | None = None
    t: float = 0.0
    events: list[int] = field(default_factory=list)
    masked: bool = False
    _frame: Callable[[], Image.Image | None] | None = None

    def frame(self) -> Image.Image | None:
        return self._frame() if self._frame else None


@dataclass
class Demo:
    path: Path
    kind: str  # "recording" | "trajectory"
    task: str
    env: str
    screen_size: tuple[int, int] | None
    complete: bool
    steps: list[DemoStep]
    end_window: dict[str, Any] | None = None
    end_frame: Callable[[], Image.Image | None] | None = None

    @property
    def name(self) -> str:
        return self.path.resolve().name


def load_demo(path: Path | str) -> Demo:
    """Read a recording (manifest.json) or a trajectory (meta.json) directory."""
    path = Path(path)
    if (path / "manifest.json").exists():
        return _from_recording(path)
    if (path / "meta.json").exists():
        return _from_trajectory(path)
    raise RecordingError(
        f"{path} is neither a recording (manifest.json) nor a trajectory (meta.json); "
        "record one with `cua record --env sandbox:mousepad --out DIR`"
    )


def _from_recording(path: Path) -> Demo:
    from recorder.reduce import reduce_events
    from recorder.store import Session

    s = Session(path)
    events = s.events()
    cache: dict[int, Image.Image | None] = {}

    def loader(seq: int | None) -> Callable[[], Image.Image | None]:
        def load() -> Image.Image | None:
            if seq is None:
                return None
            if seq not in cache:
                cache[seq] = s.frame_image(seq)
            return cache[seq]

        return load

    steps = []
    for i, a in enumerate(reduce_events(events, s.manifest.get("thresholds"))):
        steps.append(
            DemoStep(
                index=i,
                action=a.action,
                element=a.element,
                to_element=a.extra.get("to_element"),
                window=a.window,
                t=a.t,
                events=a.events,
                masked=a.masked,
                _frame=loader(a.frame),
            )
        )
    end = next((e for e in reversed(events) if e["kind"] == "end"), None)
    last_frame = s.frames()[-1]["seq"] if s.frames() else None
    m = s.manifest
    size = tuple(m["screen_size"]) if m.get("screen_size") else None
    return Demo(
        path=path,
        kind="recording",
        task=m.get("task", ""),
        env=m.get("env", ""),
        screen_size=size,
        complete=s.complete,
        steps=steps,
        end_window=(end or {}).get("data", {}).get("window"),
        end_frame=loader((end or {}).get("frame", last_frame)),
    )


def _from_trajectory(path: Path) -> Demo:
    from cua.trajectory import Trajectory

    tr = Trajectory(path)
    steps = []
    seen: list[dict] = []  # the agent stores an observation's elements once, on its first step
    for st in tr.steps():
        seen = st.extra.get("elements") or seen
        if not st.action or st.action.get("kind") in SKIP_KINDS:
            continue
        try:
            action = action_from_dict(st.action)
        except ActionParseError:
            continue
        els = st.elements or []
        if getattr(action, "element_id", None) is not None:  # ids are per observation: keep point + element
            action, el = _pin_element_id(action, st.result or {}, seen)
            els = els or ([el] if el else [])
        frame = (
            (lambda p=path / st.frame: Image.open(p).convert("RGB") if p.exists() else None)
            if st.frame
            else None
        )
        steps.append(
            DemoStep(
                index=len(steps),
                action=action,
                element=els[0] if els else None,
                to_element=st.extra.get("to_element"),
                window=st.extra.get("window"),
                t=st.t,
                events=st.extra.get("events", []),
                masked=bool(st.extra.get("masked")),
                _frame=frame,
            )
        )
    m = tr.meta
    end_frame = None
    if (path / "frames" / "final.png").exists():

        def end_frame():
            return Image.open(path / "frames" / "final.png").convert("RGB")

    return Demo(
        path=path,
        kind="trajectory",
        task=m.task,
        env=m.env,
        screen_size=tuple(m.screen_size) if m.screen_size else None,
        complete=m.outcome not in (None, "unfinished"),
        steps=steps,
        end_window=m.extra.get("end_window"),
        end_frame=end_frame,
    )


def _pin_element_id(action: Action, result: dict[str, Any], seen: list[dict]) -> tuple[Action, dict | None]:
    """An agent's click(element_id=...) -> click(x, y) at the point it used, plus that element."""
    el = next((e for e in seen if e.get("id") == action.element_id), None)
    point = result.get("point")
    if not point and el and el.get("bbox"):
        x, y, w, h = el["bbox"]
        point = (x + w // 2, y + h // 2)
    if not point:
        return action, el
    return action.model_copy(update={"element_id": None, "x": int(point[0]), "y": int(point[1])}), el


def screen_changed(a: Image.Image | None, b: Image.Image | None, frac: float = 0.0005) -> bool | None:
    """Whether two frames differ by more than a caret blink: > `frac` of pixels moved by > 24 levels."""
    if a is None or b is None:
        return None
    if a.size != b.size:
        return True
    x = np.asarray(a.convert("L"), dtype=np.int16)
    y = np.asarray(b.convert("L"), dtype=np.int16)
    return bool((np.abs(x - y) > 24).mean() > frac)
