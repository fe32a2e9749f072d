"""Curriculum: compose unit skills into harder ones and verify them the same way.

A unit skill whose reached state holds a text field and a button (a dialog) is the start of
"open the dialog -> type {text} into the field -> press the button": the composite calls the unit
skill as a sub-skill (its postcondition is the state the next steps need), types a parameter,
presses the button, and takes as postcondition what that press changed on the first run. A spin
button is a field for a number ("Go to › Line number: {number} › Jump to"), tried with 1, a value
any document has.
"""

from __future__ import annotations

import time
from typing import Any

from cua.perception.elements import Observation, UIElement
from skills.effects import Effect, diff_effects
from skills.graph import distinguishing, is_visible
from skills.navigate import BudgetExhausted
from skills.primitives import type_into_steps
from skills.profile import clean_name, role_kind
from skills.runner import run_skill
from skills.skill import Condition, Skill, SkillParam, SkillStep
from skills.units import SEP, step_for

SKIP_BUTTONS = ("close", "cancel", "help", "ok")


def dialog_parts(state: dict[str, Any]) -> tuple[list[UIElement], list[UIElement], list[UIElement]]:
    """Text fields and (non-closing) buttons that appeared with a stored graph state, and all its elements."""
    only = set(state.get("candidates") or [])
    every = [UIElement.model_validate(e) for e in state["elements"]]
    els = [e for e in every if not only or e.signature in only]
    fields = [e for e in els if role_kind(e) == "type" or _numeric(e)]
    buttons = [e for e in els if "button" in e.role and not _numeric(e) and clean_name(e.name)
               and clean_name(e.name).lower() not in SKIP_BUTTONS]
    return fields, buttons, every


def _numeric(field: UIElement) -> bool:
    return field.role.lower() == "spin button"


NUMBER_SAMPLE = "1"  # a spin button's sample: the first line, page or item exists in any document


def field_label(field: UIElement, elements: list[UIElement]) -> str:
    """A field's name, else the text of the label just left of it on the same row (GTK dialogs)."""
    if clean_name(field.name):
        return clean_name(field.name)
    fx, fy, _, fh = field.bbox
    left = [e for e in elements if e.role == "label" and clean_name(e.name) and e.bbox[0] < fx
            and abs((e.bbox[1] + e.bbox[3] / 2) - (fy + fh / 2)) < max(fh, 12)]
    return clean_name(max(left, key=lambda e: e.bbox[0]).name).rstrip(":") if left else "the text field"


def compose(unit: Skill, field: UIElement, button: UIElement, sample: str, label: str = "") -> Skill:
    """The composite skill: unit -> type {text} into field -> press button (postcondition set later)."""
    dialog = unit.name.split(SEP)[-1].rstrip(".…").strip()
    fname, bname = label or clean_name(field.name) or "the text field", clean_name(button.name)
    param = "number" if _numeric(field) else "text"
    steps = [SkillStep(action={}, skill=unit.name, note="open")]
    steps += [SkillStep(action=a) for a in type_into_steps(field.signature, f"{{{param}}}",
                                                           clean_name(field.name) or None)]
    steps.append(SkillStep(action=step_for(button)))
    return Skill(
        name=f"{unit.name}{SEP}{fname}: {{{param}}}{SEP}{bname}", app=unit.app,
        description=f"Open {dialog} ({unit.name}), type the given {param} into '{fname}' and press '{bname}' "
                    f"in {unit.app}.",
        when_to_use=f"when you need to {bname.lower()} with the {dialog} dialog: "
                    f"fill in {fname.lower()} and {bname.lower()}",
        parameters=[SkillParam(name="number", type="int", description=f"typed into {fname}", default=int(sample))
                    if _numeric(field) else SkillParam(name="text", description=f"typed into {fname}", default=sample)],
        steps=steps, provenance="composed", preconditions=unit.preconditions,
        extra={"ui_path": [*unit.extra.get("ui_path", []), fname, bname], "composed_of": [unit.name]},
    )


def candidates(ex: Any, per_dialog: int = 2) -> list[tuple[Skill, UIElement, UIElement, str]]:
    """(unit skill, field, button, field label) for verified skills that reach a state with a field and a button."""
    rounds: list[list[tuple[Skill, UIElement, UIElement, str]]] = [[] for _ in range(per_dialog)]
    for unit in sorted(ex.lib.list(app=ex.app, status="verified"), key=lambda s: len(s.steps)):
        state = ex.graph.state(unit.extra.get("state", "")) if unit.provenance == "explored" else None
        if state is None:
            continue
        fields, buttons, every = dialog_parts(state)
        for i, button in enumerate(buttons[:per_dialog] if fields else []):
            rounds[i].append((unit, fields[0], button, field_label(fields[0], every)))
    return [c for r in rounds for c in r]  # each dialog's first button before any dialog's second


def compose_and_verify(ex: Any, limit: int = 6) -> list[str]:
    """Build up to `limit` composites from the explorer's verified dialog skills; verify each. Notes back."""
    notes: list[str] = []
    ex.budget.max_actions = ex.stats.total_actions + 80 * limit  # its own allowance, counted in the same stats
    ex.budget.minutes = (time.monotonic() - ex.t0) / 60 + 1.5 * limit  # and its own time, both reported
    try:
        for cand in candidates(ex)[:limit]:
            _compose_one(ex, cand, notes)
    except BudgetExhausted as e:
        notes.append(f"composites stopped: the curriculum's allowance ({e}) is spent")
    return notes


def _compose_one(ex: Any, cand: tuple, notes: list[str]) -> None:
    """Compose, first-run and verify one composite from a (unit, field, button, label) candidate."""
    unit, field, button, label = cand
    sample = NUMBER_SAMPLE if _numeric(field) else str(ex.profile.sample_text)
    skill = compose(unit, field, button, sample, label)
    if ex.lib.get(skill.name) is not None:
        return
    for attempt in range(2):  # empty postcondition: learn what the press does; a fresh reset on retry
        if attempt:
            ex.reset()
        ex.go_start()
        first = run_skill(skill, ex.env, library=ex.lib)
        if first.ok:
            break
    if not first.ok:
        notes.append(f"composite {skill.name!r} failed on its first run: {first.error}")
        skill.status = "failed"
        skill.failed_runs = 1
        ex.lib.add(skill)
        return
    after: Observation = first.observation
    dialog = Observation(elements=[UIElement.model_validate(e) for e in ex.graph.state(unit.extra["state"])
                                   ["elements"]], size=after.size)
    present, absent = distinguishing(after, dialog)
    put = (lambda t: t) if _numeric(field) else (lambda t: t.replace(sample, "{text}"))  # "1" is in every name
    present = [put(s) for s in present if s not in ex.volatile]
    if not present and not absent:  # the press changed nothing visible: the dialog must still be there
        present = list(unit.postcondition.present)
    effects = [Effect.model_validate_json(put(e.model_dump_json()))
               for e in diff_effects(dialog, after, ex.volatile_slots, ex.volatile) if e.kind != "focus"]
    # a display's text after the press depends on the document it ran on ("0 occurrences" of the sample):
    # only text the parameter itself put there is part of the composite's effect
    effects = [e for e in effects if e.kind != "text" or "{text}" in str(e.after or "")] or effects
    skill.postcondition = Condition(present=present, absent=[s for s in absent if s not in ex.volatile
                                                             and is_visible_sig(dialog, s)], effects=effects)
    ex.lib.add(skill)
    ok = ex.verify(skill.name)
    notes.append(f"composite {skill.name!r}: {'verified' if ok else 'failed'}")


def is_visible_sig(obs: Observation, sig: str) -> bool:
    return any(e.signature == sig and is_visible(e, obs.size) for e in obs.elements)
