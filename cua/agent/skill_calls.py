"""Running what the boundary decided with no model: each clause's skill in order, with "turn on/off"
honoured against the current state, and success only when every skill's effect postcondition holds.

A control whose checked state the accessibility tree shows (a check box, a toggle button, or a skill
whose effects record a state) is set on/off by reading that state (skills.intent.with_polarity). A
menu item that exposes no state is judged by its visible effect instead: "show the status bar" when
the skill's effect (the status bar) is already on screen does nothing; "hide it" runs the skill only
when the effect is there, then checks that it is gone. "Off" for a skill whose effect cannot be seen
stops with a message rather than flipping it blind. A toggle read as "on" from a request that named no on or
off ("the rows fold over onto several lines; keep each on one line") and found on already stops with a
message too: the request most likely meant the other way, and nothing done is no success.

A keypad key explored with a sample value before it ("7 › sqrt": the 7 only made the square root
visible) runs its own step alone when an earlier call of the request entered the value ("enter 9 and
then take the square root"): its display must change, not reach the sample's result.
"""

from __future__ import annotations

import re
from typing import Any

from cua.agent.boundary import Call, Decision
from cua.agent.executor import Executor
from cua.agent.keypad import display_problem, key_step, shown_number
from cua.agent.replies import PlanStep
from skills.arithmetic import format_number
from skills.effects import check_revealed, element_text, slots
from skills.graph import state_key
from skills.intent import is_toggle, with_polarity
from skills.runner import condition_problems
from skills.skill import Condition
from skills.units import sample_prefix, typed_context

SEEN_EFFECTS = ("window_opened", "appeared", "state", "text", "title")
# what a call leaves on the screen for the calls after it not to undo (a display's text is theirs to change)
LASTING = ("window_opened", "appeared", "state")


class _Overlay:
    """The library, with one skill replaced by the copy prepared for this call (a toggle set on/off)."""

    def __init__(self, library: Any, skill: Any):
        self.library, self.skill = library, skill

    def get(self, name: str, version: int | None = None) -> Any:
        return self.skill if name == self.skill.name else self.library.get(name, version)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.library, name)


def visible_effect(skill: Any) -> Condition | None:
    """The part of a skill's postcondition that shows on the screen without opening anything, or None."""
    post = skill.postcondition
    effects = [e for e in post.effects if not e.reveal and e.kind in SEEN_EFFECTS]
    if not post.present and not effects:
        return None
    return Condition(present=list(post.present), effects=effects)


def _in_state(skill: Any, obs: Any) -> bool:
    return bool(skill.postcondition.state_key) and state_key(obs).abstract == skill.postcondition.state_key


def own_part(skill: Any, obs: Any) -> Any | None:
    """The skill without its sample-value prefix, when that prefix only set a value on the screen its
    own step acts on (found in the start state, nothing following it) and the step's control is shown
    now; its display effects become "changes" (checked by `changed_text`). None otherwise."""
    own = int(skill.extra.get("own_steps", len(skill.steps)))
    target = skill.steps[-1].action.get("target") or {}
    if not sample_prefix(skill) or obs.by_signature(target.get("signature", "")) is None:
        return None
    post = skill.postcondition
    return skill.model_copy(update={"steps": skill.steps[-own:], "postcondition": post.model_copy(update={
        "effects": [e for e in post.effects if e.kind != "text"], "state_key": None})})


# A request about the selection ("the highlighted bit", "what I've selected") acts on it, not on all the text
_SELECTION = re.compile(r"\b(?:select(?:ed|ion)|highlight(?:ed|ing)?|marked)\b", re.IGNORECASE)


def on_users_text(skill: Any, clause: str) -> Any | None:
    """A command explored on typed text, run on the user's text instead: its steps after the typing (the
    whole text selected first, unless the request is about the selection), its postcondition the text
    changing (checked by `changed_text`, any of its texts) and the states it set (Copy: Paste enabled);
    None for any other skill."""
    n = typed_context(skill)
    if not n:
        return None
    steps = skill.steps[n:] if _SELECTION.search(clause) else skill.steps[n - 1:]  # [n - 1]: select all
    post = skill.postcondition.model_copy(update={"present": [], "absent": [], "state_key": None, "effects": [
        e for e in skill.postcondition.effects if e.kind == "state"]})
    return skill.model_copy(update={"steps": steps, "postcondition": post, "preconditions": Condition()})


def changed_text(skill: Any, before: Any, after: Any, any_of: bool = False) -> str:
    """What of a skill's display effects did not change between two observations, or is gone from the
    screen after them ('' when every one changed; with `any_of`, when one did)."""
    old, new = slots(before), slots(after)
    out = []
    texts = [e for e in skill.postcondition.effects if e.kind == "text"]
    for e in texts:
        if e.slot not in new:
            out.append(f"{e.name or e.role} is not on screen")
        elif e.slot in old and element_text(old[e.slot]) == element_text(new[e.slot]):
            out.append(f"{e.name or e.role} did not change")
    return "" if any_of and len(out) < len(texts) else "; ".join(out)


def prepare(call: Call, env: Any) -> tuple[Any | None, str]:
    """The skill to run for this call (None: nothing to do) and a note on why."""
    skill = call.skill
    if call.polarity is None:
        return skill, ""
    if is_toggle(skill):
        wanted = with_polarity(skill, call.polarity == "on")
        if call.implied and not check_revealed(env, wanted.postcondition.effects, env.observe())[1]:
            # "the long rows fold over onto several lines; keep each on one line" named no on or off: read as
            # "on", a toggle already on means the request was most likely for the other way (nothing to do is
            # no success)
            raise ValueError(f"{skill.name!r} is already on and the request does not say on or off, so it may "
                             "mean the other way; nothing was changed: say 'turn it on' or 'turn it off'")
        return wanted, f"set {call.polarity}"
    seen = visible_effect(skill)
    if seen is None and skill.postcondition.state_key:  # no named effect: the screen the skill leads to
        obs = env.observe()
        holds = _in_state(skill, obs)
        if holds and state_key(obs).exact == skill.preconditions.state_key:
            return skill, ""  # its start screen already looks like its result: the structure cannot tell
        if holds == (call.polarity == "on"):
            return None, f"already {call.polarity}: the screen {'is' if holds else 'is not'} the one it leads to"
        if call.polarity == "on":
            return skill, "turn on"
        post = skill.postcondition.model_copy(update={"present": [], "absent": [], "effects": []})
        return skill.model_copy(update={"postcondition": post}), "turn off: the screen must change back"
    if seen is None:
        if call.polarity == "off":
            raise ValueError(f"cannot tell whether {skill.name!r} is on: its effect is not visible on the screen, "
                             "so turning it off could turn it on; do it with a model or by hand")
        return skill, ""
    holds = not condition_problems(seen, env.observe())
    if holds == (call.polarity == "on"):
        return None, f"already {call.polarity}: its effect {'is' if holds else 'is not'} on the screen"
    if call.polarity == "on":
        return skill, "turn on"
    post = skill.postcondition.model_copy(update={"present": [], "absent": list(seen.present), "effects": [],
                                                  "state_key": None})
    return skill.model_copy(update={"postcondition": post}), "turn off: its effect must be gone afterwards"


def run_keys(decision: Decision, env: Any, library: Any, grounder: Any = None) -> tuple[str, str]:
    """A calculation's keys in order (keypad.key_step), then its result checked on the display."""
    obs = env.observe()
    calc = decision.calculation
    if calc.from_display:  # "make that number negative": the result follows from the number shown now
        shown = shown_number([c.skill for c in decision.calls], obs)
        resolved = calc.on(shown) if shown is not None else None
        if resolved is None:
            return "failure", (f"{calc.text}: the display shows no number to start from" if shown is None else
                               f"{calc.text}: there is no result for {format_number(shown)}")
        calc = resolved
    for i, call in enumerate(decision.calls):
        skill = key_step(call.skill, obs)
        outcome = Executor(env, _Overlay(library, skill), grounder=grounder).run_skill(PlanStep(skill=skill.name))
        if not outcome.ok:
            return "failure", f"key {i + 1} of {len(decision.calls)}, {skill.name!r}, failed: {outcome.error}"
        obs = outcome.observation  # the screen after the key: the next key is looked for on it
    problem = display_problem(calc, [c.skill for c in decision.calls], obs)
    keys = " ".join(c.skill.name.rsplit("›", 1)[-1].strip() for c in decision.calls)
    if problem:
        return "failure", f"pressed {keys}: {problem}"
    return "success", f"pressed {keys}: the display shows {calc.describe()}"


def run_calls(decision: Decision, env: Any, library: Any, grounder: Any = None) -> tuple[str, str]:
    """(outcome, message) after running `decision.calls` in order; stops at the first failure."""
    if decision.calculation is not None:
        return run_keys(decision, env, library, grounder)
    done: list[str] = []
    kept: list[tuple[str, Condition, Any]] = []  # what each earlier call showed, to be there at the end
    for n, call in enumerate(decision.calls):
        desc = PlanStep(skill=call.skill.name, args=call.args).describe()
        after = f" (after {'; '.join(done)})" if done else ""
        try:
            skill, note = prepare(call, env)
        except ValueError as e:
            return "failure", f"{desc}: {e}{after}"
        if skill is None:
            done.append(f"{desc}: {note}")
            continue
        users = on_users_text(skill, call.clause)
        # the screen before: a key explored after a sample value ("7 › sqrt") acts on the value shown (the
        # user's, or one an earlier call entered); with several calls, what this one shows is checked last
        several = len(decision.calls) > 1
        before = env.observe() if several or users is not None or sample_prefix(skill) else None
        part = users or (own_part(skill, before) if before is not None else None)
        if part is not None:
            skill, note = part, note or ("on your text" if users is not None else
                                         "its own step, on the value already entered")
        outcome = Executor(env, _Overlay(library, skill), grounder=grounder).run_skill(
            PlanStep(skill=skill.name, args=call.args))
        if outcome.ok and part is not None and (unchanged := changed_text(call.skill, before, env.observe(),
                                                                          any_of=users is not None)):
            outcome.ok, outcome.error = False, unchanged
        if outcome.ok and note.startswith("turn off: the screen") and _in_state(call.skill, env.observe()):
            outcome.ok, outcome.error = False, "the screen is still the one the skill turns on"
        if not outcome.ok:
            return "failure", f"{desc}{f' ({note})' if note else ''} failed: {outcome.error}{after}"
        done.append(desc + (f" ({note})" if note else ""))
        shown = [e for e in skill.postcondition.effects if e.kind in LASTING and not e.reveal and not e.inherited]
        if shown and n < len(decision.calls) - 1:
            kept.append((desc, Condition(effects=shown), before))
    final = env.observe() if kept else None
    for desc, cond, start in kept:  # "paper mode, then degrees": the way to Degrees leaves paper mode
        if problems := condition_problems(cond, final, start):
            return "failure", f"{'; then '.join(done)} ran, but a later step undid {desc}: {'; '.join(problems[:2])}"
    return "success", "; then ".join(done) + " (each skill's postcondition or state checked)"
