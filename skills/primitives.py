"""Fine-grained, parameterised action primitives that skills and agents call.

Each primitive grounds its targets in a fresh observation, acts through the env, waits with bounded
polling (never a fixed sleep) and returns a PrimitiveResult naming what went wrong. `*_steps` helpers
give the same primitive as SkillStep action dicts (with `{param}` placeholders) for stored skills.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cua.actions import Click, Drag, Hotkey, Key, Scroll, Target, Type
from cua.env.base import EnvError
from cua.perception.elements import Observation
from cua.perception.ground import GroundingError, ground
from skills.polling import find


@dataclass
class PrimitiveResult:
    ok: bool
    error: str | None = None
    observation: Observation | None = None


def _target(t: Target | str | dict[str, Any]) -> Target:
    if isinstance(t, Target):
        return t
    if isinstance(t, str):
        return Target(text=t)
    return Target.model_validate(t)


def _find(env: Any, target: Target, timeout: float = 2.0) -> tuple[Observation, Any]:
    try:
        return find(env, target, timeout)
    except GroundingError:
        raise EnvError(f"nothing on screen matches {target.describe()}") from None


def _run(fn) -> PrimitiveResult:
    try:
        return fn()
    except EnvError as e:
        return PrimitiveResult(False, str(e))


def drag(env: Any, source: Target | str, dest: Target | str) -> PrimitiveResult:
    """Drag from one element to another (both re-grounded now)."""
    def go() -> PrimitiveResult:
        _, a = _find(env, _target(source))
        _, b = _find(env, _target(dest))
        res = env.act(Drag(x=a.point[0], y=a.point[1], to_x=b.point[0], to_y=b.point[1]))
        return PrimitiveResult(res.ok, res.error, env.observe())
    return _run(go)


def type_into(env: Any, field: Target | str, text: str, clear: bool = True) -> PrimitiveResult:
    """Click a text field, optionally select its content, and type `text` (replacing it)."""
    def go() -> PrimitiveResult:
        _, g = _find(env, _target(field))
        env.act(Click(x=g.point[0], y=g.point[1]))
        if clear:
            env.act(Hotkey(keys=["ctrl", "a"]))
        res = env.act(Type(text=text)) if text else env.act(Key(key="backspace"))
        return PrimitiveResult(res.ok, res.error, env.observe())
    return _run(go)


def _click_then_home(env: Any, what: Target | str) -> None:
    """Focus a field or slider by clicking it, then put its caret or value at the start (Home)."""
    _, g = _find(env, _target(what))
    env.act(Click(x=g.point[0], y=g.point[1]))
    env.act(Key(key="home"))


def select_span(env: Any, field: Target | str, start: int, end: int) -> PrimitiveResult:
    """Select characters [start, end) of a single-line field with the keyboard (Home, Right, Shift+Right)."""
    if not 0 <= start <= end:
        return PrimitiveResult(False, f"select_span needs 0 <= start <= end, got start={start}, end={end}")

    def go() -> PrimitiveResult:
        _click_then_home(env, field)
        for _ in range(start):
            env.act(Key(key="right"))
        for _ in range(end - start):
            env.act(Hotkey(keys=["shift", "right"]))
        return PrimitiveResult(True, None, env.observe())
    return _run(go)


def set_slider(env: Any, slider: Target | str, steps_from_min: int) -> PrimitiveResult:
    """Move a slider (or spin button) to its minimum, then `steps_from_min` keyboard steps up."""
    if steps_from_min < 0 or steps_from_min > 1000:
        return PrimitiveResult(False, f"steps_from_min must be 0..1000, got {steps_from_min}")

    def go() -> PrimitiveResult:
        _click_then_home(env, slider)
        for _ in range(steps_from_min):
            env.act(Key(key="right"))
        return PrimitiveResult(True, None, env.observe())
    return _run(go)


def scroll_until_visible(env: Any, target: Target | str, area: Target | str | None = None, dy: int = 3,
                         max_scrolls: int = 20) -> PrimitiveResult:
    """Scroll (at `area`, else the pointer) until `target` is on screen; gives up after `max_scrolls`."""
    want = _target(target)
    for _ in range(max_scrolls + 1):
        obs = env.observe()
        try:
            ground(want, obs)
            return PrimitiveResult(True, None, obs)
        except GroundingError:
            pass
        kw: dict[str, Any] = {}
        if area is not None:
            try:
                kw = dict(zip(("x", "y"), ground(_target(area), obs).point))
            except GroundingError as e:
                return PrimitiveResult(False, f"scroll area not found: {e}", obs)
        res = env.act(Scroll(dy=dy, **kw))
        if res.changed is False:  # the list did not move: its end is reached
            break
    return PrimitiveResult(False, f"{want.describe()} did not appear after scrolling {max_scrolls} times", obs)


def choose_from_combo(env: Any, combo: Target | str, option: str) -> PrimitiveResult:
    """Open a combo box and click the option with text `option`."""
    def go() -> PrimitiveResult:
        _, g = _find(env, _target(combo))
        env.act(Click(x=g.point[0], y=g.point[1]))
        _, o = _find(env, Target(text=option))
        res = env.act(Click(x=o.point[0], y=o.point[1]))
        return PrimitiveResult(res.ok, res.error, env.observe())
    return _run(go)


def type_into_steps(signature: str, text: str = "{text}", name: str | None = None) -> list[dict[str, Any]]:
    """type_into as stored skill steps: click the field by signature, select all, type."""
    target = {"signature": signature, **({"text": name} if name else {})}
    return [{"kind": "click", "target": target}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
            {"kind": "type", "text": text}]


def drag_steps(src_signature: str, dst_signature: str) -> list[dict[str, Any]]:
    return [{"kind": "drag", "target": {"signature": src_signature}, "to_target": {"signature": dst_signature}}]
