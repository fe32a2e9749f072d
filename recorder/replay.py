"""Re-execute a recording or trajectory on an environment, re-grounding each step by signature.

Per step the report says how the target was found (its element signature; else its text/role;
else the recorded coordinates), whether the same element was found, and whether the same
effect followed (the screen changed, or not, as in the recording; the window title matches).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cua.actions import Action, Target, scale_action
from cua.env.base import EnvError
from cua.perception.elements import Observation
from recorder.demo import Demo, DemoStep, screen_changed

FIND_TIMEOUT_S = 2.0


@dataclass
class StepReport:
    index: int
    action: str
    method: str  # signature | text | coordinates | none
    element_found: bool | None
    expected_change: bool | None
    changed: bool | None
    title_ok: bool | None
    same_effect: bool | None
    ok: bool
    error: str | None = None


@dataclass
class ReplayReport:
    source: str
    env: str
    steps: list[StepReport]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.steps)

    @property
    def same_effect(self) -> bool:
        return all(s.same_effect is not False for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "env": self.env,
            "ok": self.ok,
            "same_effect": self.same_effect,
            "steps": [asdict(s) for s in self.steps],
        }


def env_label(env: Any) -> str:
    """The env's ENV string (its spec()) where it has one, else its name."""
    spec = getattr(env, "spec", None)
    try:
        return str(spec()) if callable(spec) else str(spec or getattr(env, "name", ""))
    except Exception:  # noqa: BLE001 - a label must never fail a replay
        return str(getattr(env, "name", ""))


def _find(
    env: Any, obs: Observation, el: dict[str, Any] | None
) -> tuple[Observation, tuple[int, int] | None, str, bool | None]:
    """Locate a recorded element in fresh observations: (obs, point, method, same element found)."""
    if not el:
        return obs, None, "coordinates", None
    sig = el.get("signature")
    deadline = time.monotonic() + FIND_TIMEOUT_S
    while sig:
        hit = obs.by_signature(sig)
        if hit is not None:
            return obs, hit.center, "signature", True
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)  # bounded poll while the element may still be appearing (menus, dialogs)
        obs = env.observe()
    if el.get("name") or el.get("role"):
        from cua.perception.ground import GroundingError, ground

        try:
            g = ground(Target(text=el.get("name") or None, role=el.get("role") or None), obs)
            same = not sig and g.element.name == el.get("name") and g.element.role == el.get("role")
            return obs, g.point, "text", same
        except (GroundingError, ValueError):
            pass
    return obs, None, "coordinates", False


def _expected(demo: Demo, i: int) -> tuple[bool | None, str | None]:
    """From the recording: did the screen change after step i, and what was the window title then."""
    st = demo.steps[i]
    if i + 1 < len(demo.steps):
        nxt = demo.steps[i + 1]
        after, title = nxt.frame(), (nxt.window or {}).get("title")
    else:
        after, title = (demo.end_frame() if demo.end_frame else None), (demo.end_window or {}).get("title")
    return screen_changed(st.frame(), after), (title or None)


def replay_demo(
    demo: Demo, env: Any, on_step: Callable[[StepReport], None] | None = None, writer: Any = None
) -> ReplayReport:
    """Run every step of `demo` on `env`; never raises for a failing step (it is reported)."""
    reports: list[StepReport] = []
    obs = env.observe()
    src = demo.screen_size
    dst = tuple(obs.size) if obs.size and obs.size[0] else None
    for i, st in enumerate(demo.steps):
        rep = _replay_step(demo, i, st, env, obs, src, dst)
        obs = rep[1]
        reports.append(rep[0])
        if writer is not None:
            writer.add(
                image=rep[2],
                action=rep[3].to_json() if rep[3] else None,
                result={"ok": rep[0].ok, "error": rep[0].error},
                elements=[st.element] if st.element else None,
                extra={"replay": asdict(rep[0])},
            )
        if on_step:
            on_step(rep[0])
    return ReplayReport(source=str(demo.path), env=env_label(env), steps=reports)


def _replay_step(demo: Demo, i: int, st: DemoStep, env: Any, obs: Observation, src, dst):
    action: Action = st.action
    if src and dst and tuple(src) != tuple(dst):
        action = scale_action(action, tuple(src), dst)
    before_img = obs.image() if obs.screenshot is not None else None
    method, found = "none", None
    upd: dict[str, Any] = {}
    try:
        if getattr(action, "x", None) is not None:
            obs, point, method, found = _find(env, obs, st.element)
            before_img = obs.image() if obs.screenshot is not None else before_img
            if point is not None:
                upd.update(x=point[0], y=point[1])
        if action.kind == "drag" and st.to_element:
            obs, point, _, _ = _find(env, obs, st.to_element)
            if point is not None:
                upd.update(to_x=point[0], to_y=point[1])
        action = action.model_copy(update=upd) if upd else action
        res = env.act(action)
        ok, err = res.ok, res.error
    except EnvError as e:
        ok, err = False, str(e)
    after = env.observe()
    exp_change, exp_title = _expected(demo, i)
    changed = screen_changed(before_img, after.image() if after.screenshot is not None else None)
    title_ok = (exp_title == after.window_title) if exp_title and after.window_title is not None else None
    checks = [
        c
        for c in ((None if exp_change is None or changed is None else exp_change == changed), title_ok)
        if c is not None
    ]
    same = all(checks) if checks else None
    rep = StepReport(
        index=i,
        action=action.to_call(),
        method=method,
        element_found=found,
        expected_change=exp_change,
        changed=changed,
        title_ok=title_ok,
        same_effect=same if ok else False,
        ok=ok,
        error=err,
    )
    return rep, after, before_img, action


def replay_path(
    path: Path | str, env: Any, out: Path | None = None, on_step: Callable[[StepReport], None] | None = None
) -> ReplayReport:
    """Load a recording/trajectory and replay it; with `out`, also write a replay trajectory there."""
    from recorder.demo import load_demo

    demo = load_demo(path)
    writer = None
    if out is not None:
        from cua.trajectory import TrajectoryMeta, TrajectoryWriter

        writer = TrajectoryWriter(
            out,
            TrajectoryMeta(
                task=demo.task,
                env=env_label(env) or demo.env,
                model="replay",
                source="replay",
                screen_size=demo.screen_size,
                extra={"replayed": str(Path(path))},
            ),
        )
    report = replay_demo(demo, env, on_step, writer)
    if writer is not None:
        writer.finish("success" if report.ok and report.same_effect else "failure", replay=report.to_json())
    return report
