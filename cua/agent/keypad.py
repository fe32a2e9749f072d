"""A calculation (skills.arithmetic) done on the keypad the exploration found, and checked by its result.

Each key of the calculation is the library's verified skill for a control with that label ("7", "×",
"sqrt"), fewest steps first. A key explored after a sample value or from another mode ("7 › sqrt",
"View › Scientific Mode › sin") is pressed alone when it is on the screen, else after the way to it
(the mode) without the sample value's keys.
Each key's own postcondition is about the display it left after a sample value ("0 -> 7"), which a
key in the middle of a number does not reach; the calculation is judged once, at the end, by the
display showing the result computed from the request's numbers.
"""

from __future__ import annotations

import math
import re
from typing import Any

from skills.arithmetic import KEY_LABELS, Calculation
from skills.effects import element_text, slots
from skills.skill_text import kind_of, ui_path

DIGITS = tuple("0123456789")
_LABELS = {k: k for k in (*DIGITS, ".")} | {lab: k for k, labs in KEY_LABELS.items() for lab in labs}


def _label(skill: Any) -> str:
    path = ui_path(skill)
    return (path[-1] if path else skill.name).strip().lower()


def _key_of(step: Any) -> str | None:
    text = str(((step.action or {}).get("target") or {}).get("text") or "").strip().lower()
    return _LABELS.get(text)


def key_skills(library: Any) -> dict[str, Any]:
    """Abstract key name -> the library's best button skill for it, verified first, then the fewest
    steps (any status; the caller checks it)."""
    order = {"verified": 0, "unverified": 1, "failed": 2}
    found: dict[str, Any] = {}
    for skill in sorted(library.list(), key=lambda s: (order.get(s.status, 3), len(s.steps), s.name)):
        key = _LABELS.get(_label(skill))
        if key is not None and key not in found and kind_of(skill) == "button":
            found[key] = skill
    return found


def has_keypad(keys: dict[str, Any]) -> bool:
    """The library knows a number keypad: three or more digits are verified buttons (a radio item or a
    list entry named "4", such as a tab size, is no key)."""
    return sum(keys.get(d) is not None and keys[d].status == "verified" for d in DIGITS) >= 3


def missing_keys(calc: Calculation, keys: dict[str, Any]) -> list[str]:
    """The calculation's keys without a verified skill, in order (each once)."""
    out = [k for k in calc.keys if keys.get(k) is None or keys[k].status != "verified"]
    return list(dict.fromkeys(out))


def key_step(skill: Any, obs: Any) -> Any:
    """The skill to run for one key: its own steps when its control is on the screen (not the sample
    value or the mode before it, nor the key its exploration pressed after it), else the way to it
    (a mode) less the sample value's keys. No precondition (the screen it was explored from had another
    number), and a postcondition without the display effects and the screen it leads to: the
    calculation's result is checked instead."""
    follow = int(skill.extra.get("follow", 0))  # an operator's skill ends with the key after it ("7 › +": 7 + 7)
    end = len(skill.steps) - follow
    own = min(end, int(skill.extra.get("own_steps", end)))
    target = (skill.steps[end - 1].action.get("target") or {}) if end > 0 else {}
    steps = skill.steps[end - own:end]
    if obs.by_signature(target.get("signature", "")) is None:  # the way to it, less the sample value's keys
        steps = [st for st in skill.steps[:end - own] if _key_of(st) is None] + steps
    post = skill.postcondition
    return skill.model_copy(update={"steps": steps, "preconditions": type(skill.preconditions)(),
                                    "postcondition": post.model_copy(update={
                                        "effects": [e for e in post.effects if e.kind != "text"], "state_key": None})})


_NUMBER = re.compile(r"[-−]?\d[\d,\u202f\u00a0']*(?:\.\d+)?(?:e[-+]?\d+)?", re.IGNORECASE)


def _number(text: str) -> float | None:
    t = re.sub(r"[\s,\u202f\u00a0']", "", text.replace("−", "-")).rstrip(".")
    try:
        return float(t)
    except ValueError:
        return None


def _display(skills: list[Any], obs: Any) -> tuple[bool, list[str], list[float]]:
    """Whether the keys' recorded display is on the screen, its text (else every element's), and the
    numbers in those texts: the whole text, or a number in it (galculator's scientific display adds
    "DEC HEX ...")."""
    shown = slots(obs)
    slot = next((e.slot for s in skills for e in s.postcondition.effects if e.kind == "text" and e.slot in shown),
                None)
    texts = [element_text(e) for e in ([shown[slot]] if slot is not None else list(shown.values()))]
    return slot is not None, texts, [n for text in texts for token in [text, *_NUMBER.findall(text)]
                                     if (n := _number(token)) is not None]


def shown_number(skills: list[Any], obs: Any) -> float | None:
    """The number the keys' display shows (a calculation that starts from it), or None when the display is
    not found or shows no number."""
    found, _, numbers = _display(skills, obs)
    return numbers[0] if found and numbers else None


def display_problem(calc: Calculation, skills: list[Any], obs: Any) -> str:
    """'' when the display the keys write to (their recorded display effect) shows the calculation's
    result; else what it shows. Without a recorded display, any element showing the result counts."""
    found, texts, shown_numbers = _display(skills, obs)

    def shows(value: float) -> bool:
        return any(math.isclose(n, value, rel_tol=1e-7, abs_tol=1e-9) for n in shown_numbers)

    if shows(calc.result):
        return ""
    what = repr(texts[0]) if found and texts else "no element with that number"
    if calc.other_unit is not None and shows(calc.other_unit):
        return (f"the display shows {what}: {calc.text.replace('degrees', 'radians')}; the calculator works in "
                "radians: switch its angle unit to degrees first, or ask in radians")
    return f"the display shows {what}, not {calc.describe()}"
