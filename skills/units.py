"""Unit skills from explored transitions: a name from the UI path, text BM25 can match, a postcondition."""

from __future__ import annotations

from typing import Any

from cua.perception.elements import Observation, UIElement
from skills.graph import VOLATILE_ROLES, distinguishing, is_visible, state_key
from skills.profile import clean_name
from skills.skill import Condition, Skill, SkillStep

SEP = " › "


def step_for(el: UIElement, kind: str = "click", text: str | None = None) -> dict[str, Any]:
    """Our JSON action for a step on `el`: a target by signature (plus text/role to re-ground)."""
    target = {"signature": el.signature, "text": clean_name(el.name) or None, "role": el.role}
    target = {k: v for k, v in target.items() if v}
    if kind == "type":
        return {"kind": "type", "text": text or ""}
    return {"kind": "click", "target": target}


def _dialog_title(new: Observation, old: Observation | None) -> str | None:
    """The title of a dialog/window the transition opened, if any."""
    before = {e.signature for e in old.elements} if old is not None else set()
    for e in new.elements:
        if e.role in ("dialog", "alert", "file chooser", "frame", "window") and e.signature not in before \
                and is_visible(e, new.size) and e.name:
            return clean_name(e.name)
    return None


def describe(names: list[str], el: UIElement, new: Observation, old: Observation | None, app: str) -> dict[str, str]:
    """Name, description and when_to_use for the skill that clicks `el` at the end of `names`."""
    label = clean_name(el.name)
    path = SEP.join(names)
    words = label.rstrip(".…").strip()
    role = el.role.lower()
    dialog = _dialog_title(new, old)
    opened_menu = any(e.role == "menu item" or "menu item" in e.role for e in new.elements
                      if is_visible(e, new.size) and old is not None and e.signature not in
                      {o.signature for o in old.elements if is_visible(o, old.size)})
    before = {o.signature for o in old.elements if is_visible(o, old.size)} if old is not None else set()
    appeared = [e for e in new.elements if is_visible(e, new.size) and e.signature not in before]
    bar = next((e for e in appeared if e.role in ("tool bar", "panel", "info bar", "status bar")), None)
    if dialog:
        desc = f"Open the {dialog} dialog via {path} in {app}."
        when = f"when you need to open or show the {dialog} dialog, to {words.lower()}"
    elif bar is not None and not opened_menu:
        shown = ", ".join(clean_name(e.name) for e in appeared if "button" in e.role and e.name)[:80]
        desc = f"Open the {words} bar via {path} in {app}" + (f" (shows {shown})." if shown else ".")
        when = f"when you need to {words.lower()}: open or show the {words.lower()} bar"
    elif role == "menu" or opened_menu:
        desc = f"Open the {path} menu in {app} (shows its items)."
        when = f"when you need a command from the {words} menu"
    elif "check" in role or "toggle" in role:
        desc = f"Toggle {words} ({path}) in {app}: turn it on or off."
        when = f"when you need to toggle, enable, disable, show or hide {words.lower()}"
    elif "radio" in role:
        desc = f"Choose {words} ({path}) in {app}: select, set or switch to it."
        when = f"when you need to set {names[-2] if len(names) > 1 else 'it'} to {words}"
    elif "button" in role:
        where = f" in {names[-2]}" if len(names) > 1 else ""
        desc = f"Press the {words} button{where} ({path}) in {app}."
        when = f"when you need to {words.lower()}{where.lower()}"
    else:
        desc = f"Run {path} in {app}: activates the {words} item."
        when = f"when you need to {words.lower()}"
    if old is not None and new.window_title and new.window_title != old.window_title:
        desc += f" The window title becomes {clean_name(new.window_title)!r}."
    return {"name": path, "description": desc, "when_to_use": when}


def unit_skill(app: str, names: list[str], steps: list[dict[str, Any]], el: UIElement, pre: Observation,
               new: Observation, start: Observation, volatile: set[str]) -> Skill:
    """The skill that replays `steps` from the start state and reaches the state seen in `new`."""
    present, absent = distinguishing(new, pre)
    present = [s for s in present if s not in volatile]
    absent = [s for s in absent if s not in volatile]
    if not present and not absent:  # nothing appeared or vanished: require the state's own controls
        present = [e.signature for e in new.elements if is_visible(e, new.size) and e.signature not in volatile
                   and e.role not in VOLATILE_ROLES][:3]
    text = describe(names, el, new, pre, app)
    start_sigs = sorted(e.signature for e in start.elements if is_visible(e, start.size) and e.role == "menu")[:6]
    return Skill(
        name=text["name"], app=app, description=text["description"], when_to_use=text["when_to_use"],
        steps=[SkillStep(action=s) for s in steps], provenance="explored",
        preconditions=Condition(state_key=state_key(start).exact, present=start_sigs),
        postcondition=Condition(state_key=state_key(new).abstract, present=present, absent=absent),
        extra={"ui_path": names, "role": el.role, "target": el.signature},
    )
