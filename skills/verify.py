"""Verification of explored skills: the effect must be seen, twice, and doing nothing must not pass.

A skill is "verified" only when (1) its postcondition names at least one typed effect (skills.effects;
"the menu's items are gone" is none), (2) the effect, first seen when the control was explored, holds
again on every one of `verify_runs` (default 2) replays, each from a provably fresh start state, and
(3) the negative control fails: the same run with its final action moved to a neutral spot (a click on nothing in the front window) must NOT satisfy the postcondition,
the spot is found on the screen just before the final action, when the skill was explored.
A skill whose only effects are those of the path leading to it is "unverified" too. A skill that fails (1) or (3) is "unverified";
one whose replay fails is "failed". Every replay, control and reset counts against the budget
(the explorer's env is a counting proxy). `verify_batch` holds skills to the same standard but runs a
negative control once for all the skills it is the same run for (same path, same neutral spot). A
negative control looks for the postcondition as long as the replays needed to see it, with a margin
(`control_wait`), not the replays' full bound.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cua.perception.elements import Observation
from skills.candidates import neutral_point
from skills.effects import revealed_problems
from skills.graph import VOLATILE_ROLES, visible_signatures
from skills.polling import wait_for
from skills.runner import POST_TIMEOUT, condition_problems, run_skill
from skills.skill import Condition, Skill, SkillStep

CONTROL_WAIT = 1.0  # seconds a negative control looks for the postcondition beyond its replays' own wait


def negative_control(skill: Skill, own_steps: int, point: tuple[int, int] | None) -> Skill:
    """The same run with the skill's own action moved to a neutral spot (or left out when the screen
    has none); toggle guards off. The own action is the final one, or the one before the skill's
    `follow` steps (an operator key whose effect shows in what the next key does)."""
    follow = int(skill.extra.get("follow", 0))
    cut = max(0, len(skill.steps) - own_steps - follow)
    steps = [s.model_copy(update={"unless": None}) for s in skill.steps[:cut]]
    if point is not None:
        steps.append(SkillStep(action={"kind": "click", "x": point[0], "y": point[1]}, note="negative control"))
    steps += skill.steps[len(skill.steps) - follow:] if follow else []
    return skill.model_copy(update={"steps": steps, "name": skill.name + " (negative control)"})


def control_wait(seen: float) -> float:
    """How long a negative control waits for the postcondition (it should never show): `CONTROL_WAIT`
    beyond the screen settling, plus twice the longest wait the skill's own replays needed, at most
    the replays' own bound. A control is the replays' run with its final action moved, so an effect it
    caused would show as soon as theirs did; waiting the full bound only for it to fail cost most of
    an exploration's time (9 s of every 11 per skill on mousepad)."""
    return min(POST_TIMEOUT, CONTROL_WAIT + 2 * seen)


def _replay(ex: Any, skill: Skill, post_timeout: float = POST_TIMEOUT) -> Any:
    """One run from a fresh reset (state a hidden dialog kept must not leak into the next run); a menu
    reopened to check its effect is left open (what follows starts with a reset, or proves its state)."""
    ex.reset()
    res = run_skill(skill, ex.env, library=ex.lib, obs=ex._obs, post_timeout=post_timeout,  # ex.env counts
                    close_reveals=False)
    ex._obs = res.observation if res.observation is not None else ex.observe()
    return res


def set_status(lib: Any, name: str, status: str, why: str) -> None:
    """Store a status that replay counts alone cannot express (unverified: no effect seen, or the
    negative control passed) and its reason, on the latest version, in one transaction."""
    db = lib._tx()
    try:
        row = db.execute("SELECT version, body FROM skills WHERE name=? ORDER BY version DESC LIMIT 1",
                         (name,)).fetchone()
        if row is None:
            raise KeyError(f"no skill named {name!r} in {lib.path}")
        skill = Skill.model_validate_json(row[1])
        skill = skill.model_copy(update={"status": status, "extra": {**skill.extra, "checked": True,
                                                                      "status_reason": why}})
        db.execute("UPDATE skills SET status=?, body=? WHERE name=? AND version=?",
                   (status, skill.model_dump_json(), name, row[0]))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    lib._index = None


def mark(ex: Any, name: str, status: str, why: str) -> None:
    set_status(ex.lib, name, status, why)
    ex.note(f"{name!r}: {status} ({why})")


def _precheck(ex: Any, name: str) -> Skill | None:
    """The skill, or None after marking it unverified: no effect of its own can be checked."""
    skill = ex.lib.get(name)
    if not skill.postcondition.effects:
        mark(ex, name, "unverified", "no effect seen: its change cannot be told apart from doing nothing")
        return None
    if all(e.inherited for e in skill.postcondition.effects):
        mark(ex, name, "unverified", "its only effects are those of the path that leads to it")
        return None
    return skill


def _replays(ex: Any, name: str, skill: Skill) -> tuple[bool, Skill, float]:
    """`verify_runs` (>= 1) replays from a fresh start; (all held, the skill as stored, the longest wait
    for its postcondition). A replay failure caused only by elements seen changing on their own (a
    clock) repairs the postcondition once."""
    res, ok_all, seen = None, False, 0.0
    for attempt in range(2):
        ok_all = True
        for _ in range(max(1, ex.verify_runs)):
            ex.check_budget_time()
            res = _replay(ex, skill)
            seen = max(seen, res.post_wait)
            if not res.ok:  # a second look tells a self-changing element from a real failure
                ex.learn_volatile(ex._obs, ex.observe())
            ex.lib.record_run(name, res.ok)
            if res.ok:  # not "verified" before the negative control has run (a kill here must not lie)
                set_status(ex.lib, name, "unverified", "verification in progress")
            ok_all &= res.ok
            if not res.ok:
                ex.note(f"verification of {name!r} failed: {res.error}")
                break
        post = skill.postcondition
        obs = res.observation if res else None
        drop = ex.volatile | free_text_misses(ex, skill, obs)
        lost = path_misses(post.effects, obs)
        clean = post.model_copy(update={"present": [s for s in post.present if s not in drop],
                                        "absent": [s for s in post.absent if s not in drop],
                                        "effects": [e for i, e in enumerate(post.effects)
                                                    if e.slot not in ex.volatile_slots and i not in lost]})
        if not any(not e.inherited for e in clean.effects):
            clean = post  # nothing stable would be left to check: keep it failed
        if ok_all or attempt or clean == post:
            break
        skill = ex.lib.add(skill.model_copy(update={"postcondition": clean, "verified_runs": 0,
                                                      "failed_runs": 0, "status": "unverified"}))
        ex.note(f"{name!r}: dropped self-changing elements from its postcondition; verifying again")
    return ok_all, skill, seen


def verify_skill(ex: Any, name: str) -> str:
    """Replay a skill `verify_runs` (>= 1) times from a fresh start, then its negative control.

    Returns the status stored: verified, failed or unverified.
    """
    skill = _precheck(ex, name)
    if skill is None:
        return "unverified"
    ok_all, skill, seen = _replays(ex, name, skill)
    if not ok_all:
        return "failed"
    return verify_control(ex, skill, control_wait(seen))


def _control_key(skill: Skill) -> str | None:
    """Skills with the same path before their own action and the same neutral spot share one negative
    control run: it is the same run for all of them (effects hidden in a closed menu are revealed once
    for all that share the menu). None: this skill needs its own run (no neutral spot was recorded)."""
    point = skill.extra.get("neutral")
    if point is None:
        return None
    control = negative_control(skill, int(skill.extra.get("own_steps", 1)), tuple(point))
    return json.dumps([s.action for s in control.steps], sort_keys=True)


class GroupControl(NamedTuple):
    """One negative control run for the skills that share it: whether its own path ran, the skills
    whose postcondition (as `checked`) held on its screen, and how long it looked."""

    ran: bool
    held: set[str]
    checked: dict[str, Condition]
    wait: float


def group_control(ex: Any, members: list[Skill], wait: float) -> GroupControl:
    """Run the negative control `members` share once and read every member's postcondition on it."""
    first = members[0]
    control = negative_control(first, int(first.extra.get("own_steps", 1)), tuple(first.extra["neutral"]))
    res = _replay(ex, control.model_copy(update={"postcondition": Condition()}))
    obs = res.observation if res.observation is not None else ex._obs
    # the same patience a single control gets: wait (bounded) in case any postcondition shows late
    obs, _ = wait_for(ex.env, lambda o: any(not condition_problems(s.postcondition, o) for s in members), wait, obs)
    held = {s.name for s in members if not condition_problems(s.postcondition, obs)}
    hidden = [(s.name, e) for s in members if s.name in held for e in s.postcondition.effects if e.reveal]
    if res.ok and hidden:  # a language's check mark: its menu opened once for the whole group
        obs, missed = revealed_problems(ex.env, [e for _, e in hidden], obs, close=False)
        held -= {hidden[i][0] for i in missed}
    ex._obs = obs
    return GroupControl(res.ok, held, {s.name: s.postcondition for s in members}, wait)


def verify_batch(ex: Any, names: list[str]) -> dict[str, str]:
    """Verify several skills by the same standard as verify_skill (every one replayed `verify_runs` times
    from a fresh start; its postcondition must fail on the negative control), running the negative control
    once per group of skills that share it: after the first of them passed its replays, read for all of
    them, so each is stored as verified as soon as its own replays pass, the shortest first (a budget
    that ends mid-batch keeps the most). Returns the status stored per name."""
    out: dict[str, str] = {}
    todo: dict[str, Skill] = {}
    for name in names:
        skill = _precheck(ex, name)
        if skill is None:
            out[name] = "unverified"
        else:
            todo[name] = skill
    controls: dict[str, GroupControl] = {}
    for name, skill in sorted(todo.items(), key=lambda kv: len(kv[1].steps)):  # the cheapest replays first
        del todo[name]
        ok_all, skill, seen = _replays(ex, name, skill)
        if not ok_all:
            out[name] = "failed"
            continue
        key, wait = _control_key(skill), control_wait(seen)
        if key is not None and key not in controls:
            # looking longer than this skill needs is only stricter; the margin lets the others share it
            controls[key] = group_control(ex, [skill, *(s for s in todo.values() if _control_key(s) == key)],
                                          min(POST_TIMEOUT, wait + CONTROL_WAIT / 2))
        ctl = controls.get(key) if key is not None else None
        if ctl is None or not ctl.ran or ctl.wait < wait or ctl.checked.get(name) != skill.postcondition:
            out[name] = verify_control(ex, skill, wait)  # no shared run stands for this one: its own
        elif name in ctl.held:
            mark(ex, name, "unverified", "its postcondition also holds when the final action clicks a neutral spot")
            out[name] = "unverified"
        else:
            set_status(ex.lib, name, "verified", "effect seen on every replay; the negative control fails")
            out[name] = "verified"
    return out


def verify_control(ex: Any, skill: Skill, wait: float = POST_TIMEOUT) -> str:
    """The negative control of one skill whose replays all held, looking `wait` seconds for its
    postcondition (control_wait); stores and returns its status."""
    own = int(skill.extra.get("own_steps", 1))
    point = skill.extra.get("neutral")
    if point is None:  # no neutral spot recorded at exploration: find one on the screen before the action
        before = _replay(ex, negative_control(skill, own, None), wait)
        if before.ok:
            mark(ex, skill.name, "unverified", "its postcondition already holds before the final action")
            return "unverified"
        point = neutral_point(before.observation if before.observation is not None else ex._obs)
    # with no neutral spot on that screen either, the control is the run without the action, just done
    if point is not None and _replay(ex, negative_control(skill, own, tuple(point)), wait).ok:
        mark(ex, skill.name, "unverified", "its postcondition also holds when the final action clicks a neutral spot")
        return "unverified"
    set_status(ex.lib, skill.name, "verified", "effect seen on every replay; the negative control fails")
    return "verified"


def path_misses(effects: list[Any], obs: Observation | None) -> set[int]:
    """Indexes of the path's (inherited) effects on free text that a failed replay lacked. They are no
    evidence of the skill's own effect: featherpad's info bar read "The file does not exist." when
    *Edit › Paste Date and Time* was explored and "Root Instance" after a reset, and the skill failed
    on it alone. None when one of the skill's own effects was missing too."""
    if obs is None or any(e.check(obs) is not None for e in effects if not e.inherited and not e.reveal):
        return set()
    return {i for i, e in enumerate(effects) if e.inherited and e.kind == "text" and not e.reveal
            and e.role in VOLATILE_ROLES and e.check(obs) is not None}


def free_text_misses(ex: Any, skill: Any, obs: Observation | None) -> set[str]:
    """Postcondition signatures of free-text elements (labels, text) that a failed replay lacked."""
    state = ex.graph.state(skill.extra.get("state", "")) if obs is not None else None
    if state is None:
        return set()
    roles = {e["signature"]: e["role"].lower() for e in state["elements"]}
    seen = visible_signatures(obs)
    return {s for s in skill.postcondition.present if s not in seen and roles.get(s) in VOLATILE_ROLES}
