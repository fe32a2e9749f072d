"""Unit skills from explored transitions: a name from the UI path, text BM25 can match, a postcondition."""

from __future__ import annotations

import re
from typing import Any

from cua.perception.elements import Observation, UIElement
from cua.perception.regrounding import cue_for
from skills.graph import distinguishing, is_visible, state_key
from skills.profile import clean_name
from skills.candidates import neutral_point, steps_for
from skills.effects import Effect, shows_time, summary
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


def _appeared(new: Observation, old: Observation | None) -> list[UIElement]:
    """Elements visible in `new` that were not visible in `old` (all of `new`'s without an `old`)."""
    before = {o.signature for o in old.elements if is_visible(o, old.size)} if old is not None else set()
    return [e for e in new.elements if is_visible(e, new.size) and e.signature not in before]


SHOWN_ROLES = ("label", "static", "heading", "paragraph", "caption", "status bar", "info bar", "tool tip", "text")
_VERSION = re.compile(r"^v?\d+(\.\d+)+([-+ ~.\w]*)?$")


def shown_text(new: Observation, old: Observation | None, limit: int = 12) -> list[str]:
    """The text a transition brought on screen (a dialog's labels, a bar's fields, an About box's
    version), not its controls: what people describe a control by ("which version am I running",
    "the line and column at the bottom"). Nothing when it opened a menu (its items are other skills)."""
    appeared = _appeared(new, old)
    if any("menu item" in e.role for e in appeared):
        return []
    out: list[str] = []
    for e in appeared:
        text = clean_name(e.name or ("" if "editable" in e.states else e.value or "")).rstrip(":")[:100]
        if e.role not in SHOWN_ROLES or not text or (e.role == "text" and "editable" in e.states):
            continue
        text = f"version {text}" if _VERSION.match(text) else text
        if text not in out:
            out.append(text)
    return out[:limit]


_MODS = {"primary": "Ctrl", "control": "Ctrl", "ctrl": "Ctrl", "shift": "Shift", "alt": "Alt", "super": "Super",
         "meta": "Meta"}


def shortcut(keys: str | None) -> str | None:
    """AT-SPI's key binding -> the accelerator people type: GTK's 'n;<Alt>f:n;<Primary>n' (mnemonic;
    menu path; accelerator) -> 'Ctrl+N'; Qt's 'Ctrl+N' stays. None when the control has no accelerator."""
    last = (keys or "").split(";")[-1].strip()
    mods = [_MODS.get(m.lower(), m.title()) for m in re.findall(r"<(\w+)>", last)]
    key = re.sub(r"<\w+>", "", last).strip()
    if not key or (not mods and "+" not in key and len(key) == 1):  # a bare mnemonic letter is no shortcut
        return None
    return "+".join([*mods, key.upper() if len(key) == 1 else key])


def describe(names: list[str], el: UIElement, new: Observation, old: Observation | None, app: str) -> dict[str, str]:
    """Name, description and when_to_use for the skill that clicks `el` at the end of `names`."""
    label = clean_name(el.name)
    path = SEP.join(names)
    words = label.rstrip(".…").strip()
    role = el.role.lower()
    dialog = _dialog_title(new, old)
    appeared = _appeared(new, old)
    opened_menu = old is not None and any("menu item" in e.role for e in appeared)
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


def unit_skill(app: str, names: list[str], steps: list[dict[str, Any]], cand: Any, pre: Observation,
               new: Observation, start: Observation, effects: list[Effect]) -> Skill:
    """The skill that replays `steps` from the start state and causes `effects` (its postcondition).

    A toggle's last click is skipped when the item is already in the wanted state ("turn on X" when X
    is on succeeds doing nothing). Without effects the skill is kept but cannot be verified.
    """
    el = cand.el
    present, absent = distinguishing(new, pre)
    vol = {e.signature for e in effects if e.kind == "text"}  # their values are checked by the effect
    # an element named by a time of day (the new folder's "28 Nov 2026 16:30:36" in a file list) is
    # another element on every replay
    present = [s for s in present if s not in vol and not shows_time(s)]
    absent = [s for s in absent if s not in vol and not shows_time(s)]
    effects = [e for e in effects if not (e.kind in ("appeared", "disappeared") and shows_time(e.signature))]
    toggle = next((e for e in effects if e.kind == "state" and e.state in ("checked", "pressed", "selected")
                   and e.signature == el.signature), None)
    latches = toggle is not None or "toggle button" not in el.role.lower()  # galculator's keypad keys are
    # toggle buttons that never stay down: pressed, not turned on or off
    text = describe(names, el if latches else el.model_copy(update={"role": "push button"}), new, pre, app)
    said = summary(effects)  # the effect in words lives in the postcondition (Condition.describe())
    rows = [SkillStep(action=s) for s in steps]
    if toggle is not None and rows:
        rows[-len(steps_for(cand))].unless = toggle.model_copy(update={"reveal": []})
        verb = "Turn on" if toggle.after else "Turn off"
        text["description"] = f"{verb} {clean_name(el.name)} ({SEP.join(names)}) in {app}. Effect: {said}."
        text["when_to_use"] += f"; {verb.lower()} {clean_name(el.name).lower()}"
    start_sigs = sorted(e.signature for e in start.elements if is_visible(e, start.size) and e.role == "menu")[:6]
    return Skill(
        name=text["name"], app=app, description=text["description"], when_to_use=text["when_to_use"],
        steps=rows, provenance="explored",
        preconditions=Condition(state_key=state_key(start).exact, present=start_sigs),
        postcondition=Condition(state_key=state_key(new).abstract, present=present, absent=absent,
                                effects=effects),
        extra={"ui_path": names, "role": el.role, "target": el.signature, "kind": cand.kind,
               "own_steps": len(steps_for(cand)), "neutral": neutral_point(pre),
               "cues": step_cues(steps, pre, start), "shows": shown_text(new, pre),
               **{k: v for k, v in (("tooltip", el.attrs.get("description")),
                                    ("accelerator", shortcut(el.attrs.get("keys")))) if v}},
    )


def step_cues(steps: list[dict[str, Any]], *looks: Observation) -> list[dict[str, Any] | None]:
    """Per step, what re-finds its target without the tree (text, role, menu path, relative position,
    crop: cua.perception.regrounding.Cue), from the first look that shows it; skills.runner reads them."""
    out: list[dict[str, Any] | None] = []
    for s in steps:
        sig = (s.get("target") or {}).get("signature")
        hit = next(((o, e) for o in looks if sig and (e := o.by_signature(sig)) is not None), None)
        out.append(cue_for(hit[1], hit[0]).model_dump(mode="json", exclude_none=True) if hit else None)
    return out



def typed_context(skill: Skill) -> int:
    """How many leading steps type the explorer's sample text into the document and select it: a skill
    explored in the context "text typed, then selected" (`type document › Edit › Sort Lines`). Its own
    steps after them act on whatever text is there. 0 for any other skill."""
    path = skill.extra.get("ui_path") or skill.name.split(" › ")
    if len(path) < 2 or path[0] != "type document":
        return 0
    acts = [s.action for s in skill.steps]
    typed = next((i for i, a in enumerate(acts) if a.get("kind") == "type"), None)
    if typed is None or typed + 2 >= len(acts) or acts[typed + 1].get("kind") != "hotkey":
        return 0
    return typed + 2


def sample_prefix(skill: Skill) -> bool:
    """Do the skill's steps before its control's own set a sample value on the screen the control acts on
    ("7 › sqrt": the 7 only made the square root's effect visible)? The control was found in the start
    state, with nothing after it."""
    own = int(skill.extra.get("own_steps", len(skill.steps)))
    return own < len(skill.steps) and not skill.extra.get("follow") and \
        skill.extra.get("state") == skill.preconditions.state_key
