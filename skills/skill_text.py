"""What a skill is called in words: the text retrieval matches a request against.

Built from what exploration saw: the UI path, the control's role (with the verbs people use for it:
a toggle is turned on/off, shown/hidden, enabled/disabled; a radio item is switched to; a dialog is
opened), the dialog the skill opens (its title and controls), its typed effects in words
(skills.effects: "turns on Line Numbers"), the text it brings on screen (an About box's version, a
dialog's labels: `extra["shows"]`), the accessible description/tooltip and accelerator when
the explorer recorded them (`extra["tooltip"]`, `extra["accelerator"]`), and the skill's own text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from skills.effects import main_effects, own_effects
from skills.glosses import glosses

_ELLIPSIS = re.compile(r"(\.\.\.|…)$")
TOGGLE_ROLES = ("check", "toggle")


# Words people use for common GUI labels (general desktop vocabulary, not one app's): added to a
# skill's text when its label has the key word, so "open the settings" reaches "Preferences...".
THESAURUS = {
    "preferences": "settings options configuration configure setup",
    "settings": "preferences options configuration",
    "options": "settings preferences",
    "about": "version release credits authors information who made it",
    "statusbar": "status bar at the bottom of the window", "toolbar": "tool bar row of icon buttons at the top",
    "menubar": "menu bar", "menu bar": "menubar menus strip along the top file edit view",
    "viewer": "read only lock protect view only no editing", "jump": "go to take me line number",
    "help": "manual documentation user guide handbook instructions",
    "spelling": "spell check typos misspelled words proofread", "tab size": "indent indentation width",
    "reverse polish": "postfix notation operator after the numbers", "read only": "lock no editing view only",
    "find": "search look for locate", "search": "find look for",
    "replace": "substitute swap change words find and replace",
    "new": "create blank fresh empty another document tab",
    "open": "load browse existing file from disk",
    "save as": "save under a different new name copy",
    "font": "typeface text size", "go to": "jump line number", "line numbers": "number the lines gutter",
    "wrap": "wrapping long lines fit window", "basic": "simple standard normal",
    "scientific": "advanced functions trigonometry sine cosine logarithm",
    "paper": "tape roll list of sums adding machine receipt", "quit": "exit close leave", "close": "dismiss hide",
    "select all": "everything whole document", "duplicate": "copy repeat twice",
    "session": "sessions restore reopen remember set of open documents files later", "side-pane": "side pane panel list of documents sidebar",
    "date": "today time now current", "encoding": "character set charset codepage",
    "sort": "alphabetical order alphabetize arrange", "reversely": "backwards descending reverse order",
    "upper case": "capitals caps uppercase", "lower case": "lowercase",
    "uppercase": "capitals caps upper case", "lowercase": "lower case",
}


@lru_cache(maxsize=4096)
def synonyms(label: str) -> str:
    low = label.lower()
    return " ".join(v for k, v in THESAURUS.items() if re.search(rf"\b{re.escape(k)}\b", low))


def label_of(part: str) -> str:
    """'Preferences...' -> 'Preferences'; '_Line Numbers' -> 'Line Numbers'."""
    return _ELLIPSIS.sub("", part.replace("_", "")).strip()


def aliases(label: str) -> list[str]:
    """A label and the names inside it: 'Reverse Polish (RPN)' -> itself, 'Reverse Polish', 'RPN';
    'Save/Restore Session' -> itself, 'Save Session', 'Restore Session'."""
    out = [label]
    m = re.match(r"^(.*?)\s*\(([^)]+)\)\s*$", label)
    if m and m.group(1):
        out += [m.group(1), m.group(2)]
    m = re.match(r"^(\w+)/(\w+)(\s.*)?$", label)
    if m:
        out += [f"{m.group(1)}{m.group(3) or ''}", f"{m.group(2)}{m.group(3) or ''}"]
    return out


def ui_path(skill: Any) -> list[str]:
    path = skill.extra.get("ui_path") if isinstance(skill.extra, dict) else None
    return [label_of(p) for p in (path or skill.name.split("›")) if p.strip()]


def kind_of(skill: Any) -> str:
    """toggle | radio | dialog | menu | button | field | command: how people talk about the control."""
    role = str(skill.extra.get("role", "")).lower()
    effects = own_effects(getattr(skill.postcondition, "effects", []) or [])  # not its path's
    opens_menu = any(e.kind == "menu_opened" for e in effects)  # a menu of a window the path opened
    if any(e.kind == "window_opened" for e in effects) or (dialog_title(skill) and not opens_menu):
        return "dialog"
    if any(e.kind == "state" and e.state in ("checked", "pressed") for e in effects) or (
            any(t in role for t in TOGGLE_ROLES) and "toggle button" not in role):  # a key that never stays
        return "toggle"  # down (a keypad's toggle button) is a button
    if "radio" in role or "page tab" in role:
        return "radio"
    if role in ("menu",) or opens_menu or _opens_menu(skill):
        return "menu"
    if skill.parameters:
        return "field"
    if "button" in role:
        return "button"
    return "command"


def _opens_menu(skill: Any) -> bool:
    """Its postcondition is a menu that appeared (Qt reports top-level menus as plain menu items)."""
    tails = [sig.rsplit("/", 1)[-1].split(":", 1)[0] for sig in skill.postcondition.present]
    return any(t in ("popup menu", "menu") for t in tails) and not any(
        t in ("dialog", "file chooser", "alert") for t in tails)


def toggle_target(skill: Any) -> str | None:
    """The signature of the control a toggle skill flips (its last step's target)."""
    if kind_of(skill) != "toggle" or not skill.steps:
        return None
    last = skill.steps[-1].action.get("target") or {}
    return last.get("signature") or skill.extra.get("target")


def dialog_title(skill: Any) -> str | None:
    for e in getattr(skill.postcondition, "effects", []) or []:
        if e.kind == "window_opened" and e.name:
            return e.name
    for sig in skill.postcondition.present:
        m = re.search(r"(?:^|/)(?:dialog|file chooser|font chooser|color chooser|alert):([^/#]+)$", sig)
        if m:
            return m.group(1).strip()
    return None


def dialog_controls(skill: Any, limit: int = 8) -> list[str]:
    """Names of the named controls the skill's postcondition shows (a dialog's tabs, boxes, buttons)."""
    out: list[str] = []
    for sig in skill.postcondition.present:
        tail = sig.rsplit("/", 1)[-1].split("#")[0]
        role, _, name = tail.partition(":")
        name = label_of(name)
        if name and role not in ("dialog", "frame", "window", "application", "animation") and name not in out:
            out.append(name)
    return out[:limit]


def shown(skill: Any) -> list[str]:
    """The text the skill brings on screen, as exploration saw it (skills.units.shown_text), less the
    app's own name (an About box's title line says nothing about which control this is)."""
    app = str(getattr(skill, "app", "") or "").lower()
    texts = skill.extra.get("shows") or [] if isinstance(skill.extra, dict) else []
    return [str(t) for t in texts if str(t).lower() != app]


def role_verbs(kind: str, label: str, parent: str = "") -> str:
    lab = label.lower()
    if kind == "toggle":
        return (f"turn on {lab}, turn off {lab}, show {lab}, hide {lab}, enable {lab}, disable {lab}, "
                f"toggle {lab}")
    if kind == "radio":
        where = f" {parent.lower()}" if parent else ""
        return f"switch to {lab}, use {lab}, select {lab}, set{where} to {lab}, change{where} to {lab}"
    if kind == "dialog":
        return f"open {lab}, show {lab}, go to {lab}, bring up the {lab} window"
    if kind == "menu":
        return f"open the {lab} menu"
    if kind == "button":
        return f"press {lab}, click {lab}"
    return f"{lab}, run {lab}, do {lab}"


APP_WORD = " the application "  # "close mousepad" is about the application, not about a control named Close


def app_as_word(text: str, app: str) -> str:
    """The app's own name ("in mousepad", "mousepad's") as one neutral word: requests and skill texts alike."""
    if not app:
        return text
    return re.sub(rf"\b(?:in |of |from )?(?:the )?{re.escape(app)}(?:'s)?\b", APP_WORD, text, flags=re.IGNORECASE)


def phrases(skill: Any) -> list[str]:
    """Short texts that each name the skill one way (its label, the label under its verbs, the dialog it
    opens, its effect, its tooltip, a synonym, what the command does in plain words: skills.glosses): a
    request is compared with each, and the nearest counts.
    A short request is closer to one short phrase than to the whole document."""
    path = ui_path(skill)
    label = path[-1] if path else skill.name
    parent = path[-2] if len(path) > 1 else ""
    kind = kind_of(skill)
    out = [*aliases(label), " ".join(path[-2:]) if parent else ""]
    if skill.description and not skill.extra.get("ui_path") and "›" not in skill.name:
        # a written or recorded skill (no menu path): its description is what names it
        out.append(" ".join(app_as_word(skill.description[:160], getattr(skill, "app", "")).split()))
    out += [v.strip() for v in role_verbs(kind, label, parent).split(",")][:4]
    out += [f"{label} {w}" if len(w.split()) == 1 else w for w in _synonym_phrases(label)]
    out += glosses(label) if kind != "menu" else []  # a menu's title names its items' group, not a command
    effects = main_effects(getattr(skill.postcondition, "effects", []) or [])
    out += [e.describe() for e in effects if e.kind in ("state", "window_opened", "appeared")][:3]
    title = dialog_title(skill)
    if title:
        out.append(f"open the {title} window")
    told = [str(t)[:120] for k in ("tooltip", "accessible_description") if (t := skill.extra.get(k))]
    out += [" ".join(app_as_word(t, getattr(skill, "app", "")).split()) for t in told + shown(skill)[:3]]
    seen: set[str] = set()
    return [p for p in out if p and not (p.lower() in seen or seen.add(p.lower()))]


def _synonym_phrases(label: str) -> list[str]:
    low = label.lower()
    return [v for k, v in THESAURUS.items() if re.search(rf"\b{re.escape(k)}\b", low)]


def _clip(text: str, most: int = 120) -> str:
    """A long text (a help page that filled a view) says little about the control and drowns its words."""
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0] + " ..."


_TYPED = re.compile(r"^type \w+$")


def document(skill: Any) -> str:
    """The skill in sentences, for the embedding model and BM25 alike."""
    path = ui_path(skill)
    label = path[-1] if path else skill.name
    parent = path[-2] if len(path) > 1 else ""
    kind = kind_of(skill)
    shown_path = [p for p in path if not _TYPED.match(p)]  # "type document": the explorer's set-up, no label
    parts = [f"{label}.", f"{' > '.join(shown_path)}." if len(shown_path) > 1 else ""]
    parts.append(role_verbs(kind, label, parent) + ".")
    also = synonyms(label)
    if also:
        parts.append(f"Also: {also}.")
    effects = main_effects(getattr(skill.postcondition, "effects", []) or [])
    words = "; ".join(_clip(e.describe()) for e in effects if e.kind != "focus")
    if words:
        parts.append(f"It {words}.")
    title = dialog_title(skill)
    if title:
        parts.append(f"Opens the {title} dialog.")
        controls = dialog_controls(skill)
        if controls:
            parts.append(f"It has {', '.join(controls)}.")
    texts = shown(skill)
    if texts:
        parts.append(f"It shows {'; '.join(texts)}.")
    for key in ("tooltip", "accessible_description", "accelerator"):
        val = skill.extra.get(key)
        if val:
            parts.append(f"{'Shortcut ' if key == 'accelerator' else ''}{val}.")
    if skill.parameters:
        parts.append("Takes " + ", ".join(p.description or p.name for p in skill.parameters) + ".")
    parts.append(skill.description)
    return " ".join(p for p in parts if p)
