"""The executor: runs one plan step (a skill or an atomic action) and reports what happened.

Element ids in a plan refer to the screen the plan was made on; after the screen changes they
are re-found by signature (then by name and role) in the current observation. A failed step,
or one with no visible effect, comes back with the fresh observation so the planner can re-plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cua.actions import Target
from cua.agent.replies import PlanStep
from cua.env.base import ActionResult, EnvError
from cua.perception.elements import Observation

NO_EFFECT_KINDS = {"click", "double_click", "right_click", "drag", "type", "key", "hotkey", "scroll"}


@dataclass
class StepOutcome:
    ok: bool
    observation: Observation
    error: str | None = None
    no_effect: bool = False
    results: list[ActionResult] = field(default_factory=list)

    def summary(self) -> str:
        if not self.ok:
            return f"FAILED: {self.error}"
        return "ok (no visible effect)" if self.no_effect else "ok"


def remap_elements(action: Any, plan_obs: Observation, obs: Observation) -> Any:
    """Rewrite element ids from the plan's observation to the same elements in `obs`."""
    if plan_obs is obs:
        return action
    upd: dict[str, Any] = {}
    for prefix in ("", "to_"):
        eid = getattr(action, prefix + "element_id", None)
        if eid is None:
            continue
        try:
            old = plan_obs.element(eid)
        except KeyError:
            raise EnvError(f"element {eid!r} is not in the plan's screen") from None
        new = obs.by_signature(old.signature)
        if new is None:
            from cua.perception.ground import GroundingError, ground

            try:
                new = ground(Target(text=old.name or None, role=old.role), obs).element
            except (GroundingError, ValueError):
                raise EnvError(f"element {eid!r} ({old.role} {old.name!r}) from the plan is no longer on "
                               "screen") from None
        upd[prefix + "element_id"] = new.id
    return action.model_copy(update=upd) if upd else action


class Executor:
    """Runs plan steps on a (guarded) environment, with skills from an optional library."""

    def __init__(self, env: Any, library: Any = None, detect_no_effect: bool = True, grounder: Any = None):
        self.env = env
        self.library = library
        self.detect_no_effect = detect_no_effect
        self.grounder = grounder  # a cua.models.grounder.Grounder; None: the env grounds targets by perception

    def run(self, step: PlanStep, plan_obs: Observation, obs: Observation, observe_after: bool = True) -> StepOutcome:
        if step.skill:
            return self.run_skill(step, obs)
        return self.run_action(step.action, plan_obs, obs, observe_after)

    def run_skill(self, step: PlanStep, obs: Observation | None = None) -> StepOutcome:
        from skills.runner import run_skill

        skill = self.library.get(step.skill) if self.library is not None else None
        if skill is None:
            return StepOutcome(False, self.env.observe(), f"skill {step.skill!r} is not in the library")
        self.env.context = f"skill {skill.name} v{skill.version}"
        current = obs if obs is not None and self.env.last_obs is obs else None
        res = run_skill(skill, _SkillView(self.env, skill, current, self.library), step.args, self.library,
                        relative=True)  # on the user's screen: its texts need not be the explored ones
        obs = res.observation if res.observation is not None else self.env.observe()
        return StepOutcome(res.ok, obs, res.error, results=list(res.steps))

    def run_action(self, action: Any, plan_obs: Observation, obs: Observation,
                   observe_after: bool = True) -> StepOutcome:
        """Run one action; with observe_after=False (the next step needs no grounding) the screen is
        not perceived again and no-effect detection relies on the env's own `changed`."""
        try:
            action = remap_elements(action, plan_obs, obs)
        except EnvError as e:
            return StepOutcome(False, obs, str(e))
        if self.env.last_obs is not obs:  # the env resolves element ids against its latest observation
            obs = self.env.observe()
            try:
                action = remap_elements(action, plan_obs, obs)
            except EnvError as e:
                return StepOutcome(False, obs, str(e))
        before = obs
        try:
            action = self.ground_targets(action, obs)
        except EnvError as e:
            return StepOutcome(False, obs, str(e))
        try:
            result = self.env.act(action)
        except EnvError as e:
            return StepOutcome(False, self.env.observe(), str(e))
        if not observe_after and result.ok and result.changed is not False:
            return StepOutcome(True, before, results=[result])
        after = self.env.observe()
        if not result.ok:
            return StepOutcome(False, after, result.error or "the action failed", results=[result])
        no_effect = False
        if self.detect_no_effect and action.kind in NO_EFFECT_KINDS:
            no_effect = result.changed is False or (result.changed is None and _same_screen(before, after))
        return StepOutcome(True, after, results=[result], no_effect=no_effect)


    def ground_targets(self, action: Any, obs: Observation) -> Any:
        """Resolve `target` / `to_target` through the configured grounder (perception as the fallback)
        and note which grounder answered, for the step the env records next."""
        fields = [p for p in ("", "to_") if getattr(action, p + "target", None) is not None]
        if not fields:
            return action
        from cua.agent.safety import destructive_reason
        from cua.models.base import ModelError
        from cua.models.grounder import GroundingFailed, PerceptionGrounder

        if self.grounder is None:  # the env grounds it (same observation); note which source will answer
            try:
                who = PerceptionGrounder().locate(getattr(action, fields[0] + "target"), obs).grounder
            except GroundingFailed:
                who = "perception"
            self.env.step_extra = {"grounder": who}
            return action

        why = destructive_reason(action, obs)  # judged on the words: the point may land where no name is known
        upd: dict[str, Any] = {}
        notes: list[dict[str, Any]] = []
        for p in fields:
            target = getattr(action, p + "target")
            try:
                got = self.grounder.locate(target, obs)
            except (GroundingFailed, ModelError) as e:
                try:
                    got = PerceptionGrounder().locate(target, obs)
                except GroundingFailed as e2:
                    raise EnvError(f"grounder {self.grounder.name} failed ({e}); perception too ({e2})") from None
                got.detail = f"{self.grounder.name} failed: {e}"[:200]
            upd.update({p + "x": got.point[0], p + "y": got.point[1], p + "target": None})
            notes.append({"target": target.describe(), "grounder": got.grounder, "point": list(got.point),
                          "reply": got.detail})
        self.env.step_extra = {"grounder": notes[0]["grounder"], "grounding": notes,
                               **({"destructive": why} if why else {})}
        return action.model_copy(update=upd)


def _leaf_needs(skill: Any, library: Any, depth: int = 0) -> list[bool]:
    """Per action the skill will run (sub-skills expanded): whether it needs a fresh observation."""
    out: list[bool] = []
    for s in skill.steps:
        sub = library.get(s.skill) if s.skill and library is not None and depth < 8 else None
        if sub is not None:
            out += _leaf_needs(sub, library, depth + 1)
        else:
            out.append(bool(s.skill) or needs_screen(s.action))
    return out


def _same_screen(a: Observation, b: Observation) -> bool:
    try:
        return a.image_hash() == b.image_hash()
    except (ValueError, OSError):
        return False


def needs_screen(action: dict[str, Any] | Any) -> bool:
    """Whether an action must be grounded in a fresh observation (it names an element or target)."""
    get = action.get if isinstance(action, dict) else lambda k: getattr(action, k, None)
    return any(get(k) is not None for k in ("element_id", "target", "to_element_id", "to_target"))


class _SkillView:
    """The env as run_skill sees it: perceives only where a step needs grounding, and at the end.

    run_skill observes first and after every step; the plan's current observation serves the first
    look, and when the next action is keyboard-only (no element to find) the previous observation is
    handed back once instead of perceiving a screen nobody will read. Any further look before the next
    action (a sub-skill's postcondition wait) perceives for real. Sub-skills count by their own actions.
    """

    def __init__(self, env: Any, skill: Any, current: Observation | None = None, library: Any = None):
        self.env = env
        self.need = _leaf_needs(skill, library)
        self.acted = 0
        self.cached: Observation | None = None
        self.current = current  # the latest observation, still valid before the first action
        self.served = False  # the cached observation was handed back since the last action

    def observe(self) -> Observation:
        if self.current is not None and self.acted == 0:
            self.cached, self.current = self.current, None
            return self.cached
        if (self.cached is not None and not self.served and 0 < self.acted < len(self.need)
                and not self.need[self.acted]):
            self.served = True
            return self.cached
        self.cached = self.env.observe()
        return self.cached

    def act(self, action: Any) -> ActionResult:
        result = self.env.act(action)
        self.acted += 1
        self.served = False
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)
