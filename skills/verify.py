"""Verification of explored skills: replay each from the provable start state, repair self-changing checks."""

from __future__ import annotations

from typing import Any

from cua.perception.elements import Observation
from skills.graph import VOLATILE_ROLES, visible_signatures
from skills.runner import run_skill


def verify_skill(ex: Any, name: str) -> bool:
    """Replay a skill `verify_runs` times from the start state; each run is counted in the library.

    A failure caused only by elements seen changing on their own (a clock) repairs the
    postcondition (a new version without them) and verifies again, once.
    """
    skill = ex.lib.get(name)
    res, ok_all = None, False
    for attempt in range(2):
        ok_all = True
        for _ in range(ex.verify_runs):
            ex.check_budget_time()
            ex.go_start()
            res = run_skill(skill, ex.env, library=ex.lib, obs=ex._obs)
            ex.stats.total_actions += len(res.steps)
            ex._obs = res.observation if res.observation is not None else ex.observe()
            if not res.ok:  # a second look tells a self-changing element from a real failure
                ex.learn_volatile(ex._obs, ex.observe())
            ex.lib.record_run(name, res.ok)
            ok_all &= res.ok
            if not res.ok:
                ex.note(f"verification of {name!r} failed: {res.error}")
                break
        post = skill.postcondition
        drop = ex.volatile | free_text_misses(ex, skill, res.observation if res else None)
        clean = post.model_copy(update={"present": [s for s in post.present if s not in drop],
                                        "absent": [s for s in post.absent if s not in drop]})
        if not clean.present and not clean.absent:
            clean = post  # nothing stable would be left to check: keep it failed
        if ok_all or attempt or clean == post:
            break
        skill = ex.lib.add(skill.model_copy(update={"postcondition": clean, "verified_runs": 0,
                                                      "failed_runs": 0, "status": "unverified"}))
        ex.note(f"{name!r}: dropped self-changing elements from its postcondition; verifying again")
    return ok_all


def free_text_misses(ex: Any, skill: Any, obs: Observation | None) -> set[str]:
    """Postcondition signatures of free-text elements (labels, text) that a failed replay lacked."""
    state = ex.graph.state(skill.extra.get("state", "")) if obs is not None else None
    if state is None:
        return set()
    roles = {e["signature"]: e["role"].lower() for e in state["elements"]}
    seen = visible_signatures(obs)
    return {s for s in skill.postcondition.present if s not in seen and roles.get(s) in VOLATILE_ROLES}
