"""What the recorder attaches to: an X display (and its env vars) plus an element probe.

`open_target("sandbox:mousepad")` starts the sandbox desktop and returns its DISPLAY; the probe
looks up the element under the pointer / in focus through AT-SPI (cua.perception.a11y).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from recorder.store import RecordingError


def _as_dict(el: Any) -> dict[str, Any] | None:
    if el is None:
        return None
    if hasattr(el, "model_dump"):
        return el.model_dump(mode="json")
    return dict(el) if isinstance(el, dict) else None


class A11yProbe:
    """Element lookups through the env's own AT-SPI access (same bus as its app)."""

    def __init__(self, env: Any = None):
        self.env = env

    def _a11y(self) -> Any:
        from cua.perception import a11y

        return a11y

    def element_at(self, x: int, y: int) -> dict[str, Any] | None:
        fn = getattr(self.env, "element_at", None)
        if fn is None:
            a11y = self._a11y()
            fn = getattr(a11y, "element_at", None)
            if fn is None:
                return None
        return _as_dict(fn(x, y))

    def focused(self) -> dict[str, Any] | None:
        fn = getattr(self.env, "focused_element", None)
        if fn is None:
            a11y = self._a11y()
            fn = getattr(a11y, "focused_element", None) or getattr(a11y, "focused", None)
            if fn is None:
                return None
        return _as_dict(fn())


@dataclass
class RecordTarget:
    display: str
    x_env: dict[str, str] = field(default_factory=dict)
    probe: Any = None
    env: Any = None

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


def _display_of(env: Any) -> tuple[str | None, dict[str, str]]:
    for holder in (env, getattr(env, "sandbox", None), getattr(env, "sb", None)):
        if holder is None:
            continue
        disp = getattr(holder, "display", None)
        if isinstance(disp, str) and disp:
            x_env = getattr(holder, "env", None)
            return disp, dict(x_env) if isinstance(x_env, dict) else {}
    return None, {}


def open_target(spec: str) -> RecordTarget:
    """Resolve an ENV string to something recordable; raise RecordingError naming the fix if not."""
    kind = (spec or "").split(":", 1)[0].strip().lower()
    if kind == "sandbox":
        from cua.env import make_env

        env = make_env(spec)
        disp, x_env = _display_of(env)
        if not disp:
            env.close()
            raise RecordingError(f"the {spec} env does not expose its X display; cannot record it")
        return RecordTarget(disp, x_env, A11yProbe(env), env)
    if kind == "desktop":
        disp = os.environ.get("DISPLAY")
        if not disp:
            raise RecordingError(
                "--env desktop records the current X display, but $DISPLAY is not set; "
                "set DISPLAY or use --env sandbox:APP"
            )
        return RecordTarget(disp, {}, A11yProbe(None), None)
    if kind in ("browser", "remote"):
        raise RecordingError(
            f"recording {kind}: envs is not supported here; record a browser on a desktop "
            "(--env 'sandbox:chromium --no-sandbox URL'), or use the guest's /recording API "
            "for a remote desktop"
        )
    raise RecordingError(f"unknown env {spec!r}; use sandbox:APP or desktop")
