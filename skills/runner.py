"""Replay a skill: fill its parameters, re-ground each step's target in a fresh observation, check the postcondition."""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import ActionParseError, Target, action_from_dict
from cua.env.base import ActionResult, EnvError
from cua.perception.elements import Observation
from cua.perception.ground import GroundingError
from cua.perception.regrounding import Cue, Regrounder, tree_missing
from skills.effects import check_revealed, effect_problems
from skills.graph import is_visible
from skills.polling import wait_for
from skills.profile import scrolled_already
from skills.skill import Condition, Skill
from skills.units import sample_prefix

POST_TIMEOUT = 4.0  # seconds a postcondition may take to show after the last step (slow, loaded machines)
POINTER_FIELDS = (("target", "x", "y"), ("to_target", "to_x", "to_y"))
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SkillRunResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    ok: bool
    error: str | None = None
    steps: list[ActionResult] = Field(default_factory=list)
    observation: Any = None
    grounding: list[dict[str, Any]] = Field(default_factory=list, description="Per grounded step: step, via, "
                                            "source (a11y|ocr|vision|crop) and why it fell back, if it did.")
    post_source: str = Field("a11y", description="What checked the postcondition: a11y, or visual (OCR + pixels).")
    post_wait: float = Field(0.0, description="Seconds spent waiting for the postcondition after the last step.")


UNLESS_GONE_WAIT = 0.3  # seconds a step skipped once its element is gone waits for it to go (a closing menu)


def bind_args(skill: Skill, args: dict[str, Any] | None) -> dict[str, Any]:
    """Parameter values for a run: given args, then defaults; a missing required one is an error."""
    args = dict(args or {})
    known = {p.name for p in skill.parameters}
    unknown = set(args) - known
    if unknown:
        raise ValueError(f"skill {skill.name!r} has no parameter(s) {sorted(unknown)}; "
                         f"its parameters are {sorted(known) or 'none'}")
    for p in skill.parameters:
        if p.name not in args:
            if p.default is None:
                raise ValueError(f"skill {skill.name!r} needs a value for parameter {p.name!r} ({p.description})")
            args[p.name] = p.default
    return args


def fill(value: Any, args: dict[str, Any]) -> Any:
    """Replace `{param}` placeholders in every string of a step (nested dicts/lists too)."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: str(args[m.group(1)]) if m.group(1) in args else m.group(0), value)
    if isinstance(value, dict):
        return {k: fill(v, args) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, args) for v in value]
    return value


def loose(signature: str) -> str:
    """A signature less its ancestors' names and its sibling number: a new tab is 'page tab:Untitled'
    under a tab list named after whichever document is current ('page tab list:notes.txt')."""
    *up, own = signature.split("/")
    return "/".join([*(p.split(":", 1)[0] for p in up), re.sub(r"#\d+$", "", own)])


def _arrived(obs: Observation, start: Observation | None) -> set[str]:
    """The loose signatures shown more often in `obs` than in `start`: elements that arrived since."""
    if start is None:
        return set()
    before, after = (Counter(loose(e.signature) for e in o.elements if is_visible(e, o.size)) for o in (start, obs))
    return set(after - before)


def condition_problems(cond: Condition, obs: Observation, start: Observation | None = None,
                       relative: bool = False) -> list[str]:
    """What in `obs` contradicts a condition (empty when it holds). With `start` (the screen before the
    run), an element that should be present or appear counts as there when one of its role and name,
    under ancestors of the same roles, arrived since: the names around it depend on the document.
    `relative` (a run on the user's screen, not a replay from the explored start): a text that started
    other than recorded must change rather than reach the recorded result (effect_problems)."""
    vis = {e.signature for e in obs.elements if is_visible(e, obs.size)}
    wanted = [*cond.present, *(e.signature for e in cond.effects if e.kind == "appeared")]
    new = _arrived(obs, start) if any(s not in vis for s in wanted) else set()  # polled: only when needed
    out = [f"missing {s!r}" for s in cond.present if s not in vis and loose(s) not in new]
    out += [f"unexpected {s!r}" for s in cond.absent if s in vis]
    if cond.window_title and cond.window_title.lower() not in (obs.window_title or "").lower():
        out.append(f"window title {obs.window_title!r} lacks {cond.window_title!r}")
    return out + effect_problems([e for e in cond.effects if not e.reveal and not (
        e.kind == "appeared" and e.signature not in vis and loose(e.signature) in new)], obs,
        start if relative else None)


def scroll_to(env: Any, target: dict[str, Any], obs: Observation, tries: int = 8) -> tuple[Observation, bool]:
    """Scroll the list holding `target` (found by a visible sibling) down, then up, until it shows."""
    from cua.actions import Scroll

    sig = target["signature"]
    suffix = f"/{target.get('role', '')}:{target.get('text', '')}"
    parent = sig[: -len(suffix)] if sig.endswith(suffix) else sig.rsplit("/", 1)[0]
    for dy in [3] * tries + [-3] * (2 * tries):
        sib = next((e for e in obs.elements if e.signature.startswith(parent + "/") and is_visible(e, obs.size)
                    and e.signature.count("/") == sig.count("/")), None)
        if sib is None:
            return obs, False
        env.act(Scroll(x=sib.center[0], y=sib.center[1], dy=dy))
        obs = env.observe()
        if obs.by_signature(sig) is not None:
            return obs, True
    return obs, False


def _resolve(action: dict[str, Any], obs: Observation, grounder: Regrounder, cue: Cue | None = None,
             env: Any = None, log: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], Observation]:
    """Turn `target` / `to_target` into screen points: signature, tolerant a11y, then our own perception.

    Without a tree the target may still be appearing (a menu opening): look again, bounded (3 s).
    """
    out = dict(action)
    for tf, xf, yf in POINTER_FIELDS:
        if tf not in out or out[tf] is None:
            continue
        target = Target.model_validate(out.pop(tf))
        deadline = time.monotonic() + 3.0
        while True:
            try:
                g = grounder.ground(target, obs, cue if tf == "target" else None)
                break
            except GroundingError as e:
                if env is None or time.monotonic() > deadline:
                    raise EnvError(str(e)) from None
                obs = env.observe()
        if log is not None:
            log.append({"via": g.via, "source": g.source, "note": g.note, "point": list(g.point),
                        "text": target.text or g.element.name})
        out[xf], out[yf] = g.point
    return out, obs


def step_cue(skill: Skill, i: int) -> Cue | None:
    """The re-finding cue recorded for step `i` (skill.extra['cues'][i]), if any."""
    cues = skill.extra.get("cues") or []
    raw = cues[i] if i < len(cues) else None
    try:
        return Cue.model_validate(raw) if raw else None
    except ValueError:
        return None


def run_skill(skill: Skill, env: Any, args: dict[str, Any] | None = None, library: Any = None,
              check_pre: bool = False, obs: Observation | None = None, _depth: int = 0,
              grounder: Regrounder | None = None, post_timeout: float = POST_TIMEOUT,
              close_reveals: bool = True, relative: bool = False) -> SkillRunResult:
    """Replay `skill` on `env` now; ok when every step ran and the postcondition holds.

    `obs`: a fresh observation of the current screen, if the caller has one (saves a look).
    `grounder`: the sources replay may use (default all: a11y, then OCR, detector and crops).
    `post_timeout`: how long a postcondition that does not hold yet may take to show (bounded polling).
    `close_reveals`: close the menu reopened to check an effect hidden in it (not when a reset follows).
    `relative`: the run starts on the user's screen, not the explored one (condition_problems).
    """
    grounder = grounder or Regrounder()
    relative = relative and not sample_prefix(skill)  # its own steps put the text its effect starts from
    log: list[dict[str, Any]] = []
    if _depth > 8:
        return SkillRunResult(ok=False, error=f"skill {skill.name!r}: sub-skills nest deeper than 8 (a cycle?)")
    try:
        values = bind_args(skill, args)
    except ValueError as e:
        return SkillRunResult(ok=False, error=str(e))
    results: list[ActionResult] = []
    obs = obs if obs is not None else env.observe()
    start, last_click = obs, None
    if check_pre:
        problems = condition_problems(skill.preconditions, obs)
        if problems:
            return SkillRunResult(ok=False, error=f"precondition of {skill.name!r} fails: {'; '.join(problems[:3])}",
                                  observation=obs)
    before = obs  # the screen the last step acted on
    for i, step in enumerate(skill.steps):
        if step.skill:
            sub = library.get(step.skill) if library is not None else None
            if sub is None:
                return SkillRunResult(ok=False, error=f"step {i}: sub-skill {step.skill!r} not in the library",
                                      steps=results, observation=obs)
            res = run_skill(sub, env, fill(step.args, values), library, obs=obs, _depth=_depth + 1, grounder=grounder,
                            relative=relative)
            results += res.steps
            log += [{**g, "step": f"{i}.{g['step']}"} for g in res.grounding]
            obs = res.observation if res.observation is not None else env.observe()
            if not res.ok:
                return SkillRunResult(ok=False, error=f"step {i} ({step.skill}): {res.error}", steps=results,
                                      observation=obs)
            continue
        if step.unless is not None:  # a menu that closes after its item's click may take a moment to go
            wait = UNLESS_GONE_WAIT if step.unless.kind == "disappeared" else 0.0
            obs, held = wait_for(env, lambda o, u=step.unless: u.check(o) is None, wait, obs)
            if held:
                continue  # already in the wanted state (a toggle that is on, its menu gone): nothing to do
        raw = fill(step.action, values)
        target = raw.get("target") or {}
        sig = target.get("signature")
        if sig and not tree_missing(obs):  # the element may still be appearing (a menu opening): wait for it, bounded
            obs, found = wait_for(env, lambda o, sig=sig, raw=raw: o.by_signature(sig) is not None
                                  and not scrolled_already(raw, o), 0.6, obs)  # a scroll's row: on screen
            if scrolled_already(raw, obs):
                continue  # a scroll that reveals items of a long menu: the menu shows them already
            if not found:  # in a scrolled list (menus keep their offset): scroll it to the target
                obs, found = scroll_to(env, target, obs)
            if not found:
                obs, _ = wait_for(env, lambda o, sig=sig: o.by_signature(sig) is not None, 1.5, obs)
        before = obs
        try:
            n = len(log)
            resolved, obs = _resolve(raw, obs, grounder, step_cue(skill, i), env, log)
            for g in log[n:]:
                g["step"] = i
            action = action_from_dict(resolved)
            last_click = (before, log[-1]) if len(log) > n else last_click
            res = env.act(action)
        except (ActionParseError, EnvError) as e:
            return SkillRunResult(ok=False, error=f"step {i} ({raw.get('kind')}): {e}", steps=results, observation=obs,
                                  grounding=log)
        results.append(res)
        if not res.ok:
            return SkillRunResult(ok=False, error=f"step {i} ({raw.get('kind')}): {res.error}", steps=results,
                                  observation=obs, grounding=log)
        obs = env.observe()
    post = Condition.model_validate(fill(skill.postcondition.model_dump(), values))
    gone = not tree_missing(before) and any(e.kind == "window_closed" for e in post.effects)  # its app quit
    if tree_missing(obs) and not gone:  # no tree to read the effect from: see it in pixels and OCR instead
        from skills.visual_post import check_visually

        reveal = [s.action for s in skill.steps[:-1] if s.action.get("kind") == "click" and s.action.get("target")]
        obs, problems = check_visually(post, env, start, obs, grounder, last_click, reveal)
        err = None if not problems else f"postcondition of {skill.name!r} fails (seen visually): {'; '.join(problems[:3])}"
        return SkillRunResult(ok=not problems, error=err, steps=results, observation=obs, grounding=log,
                              post_source="visual")
    t = time.monotonic()
    obs, ok = wait_for(env, lambda o: not condition_problems(post, o, start, relative), post_timeout, obs)  # loaded
    waited = time.monotonic() - t
    problems = condition_problems(post, obs, start, relative)
    if ok and any(e.reveal for e in post.effects):  # effects hidden in a closed menu: reopen it to look
        obs, problems = check_revealed(env, post.effects, obs, close_reveals, start if relative else None)
        ok = not problems
    err = None if ok else f"postcondition of {skill.name!r} fails: {'; '.join(problems[:3])}"
    return SkillRunResult(ok=ok, error=err, steps=results, observation=obs, grounding=log, post_wait=waited)
