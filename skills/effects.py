"""Typed effects: what an action changed, computed from a state diff that includes values.

An effect is what a skill's postcondition names and what verification must see: a display's text
went from A to B, a check box became checked, a dialog titled X opened, the window title changed,
the focus moved, a menu opened. "A menu's items are gone" is not an effect: Escape does that too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import Key, Target, action_from_dict
from cua.perception.elements import Observation, UIElement
from cua.perception.ground import GroundingError
from cua.perception.visual_check import row_mark
from skills.polling import find
from skills.profile import is_enabled, scrolled_already

EffectKind = Literal["text", "state", "window_opened", "window_closed", "title", "focus", "appeared",
                     "disappeared", "menu_opened"]
WINDOW_ROLES = ("dialog", "alert", "file chooser", "frame", "window", "color chooser", "font chooser")
TOGGLE_STATES = ("checked", "selected", "expanded", "pressed")
# What a click can show or hide as its effect: bars and panels, and controls (a keypad's group of keys
# that "View › Buttons › Display Control" hides; the menu bar that "Show menu bar" hides).
BAR_ROLES = ("tool bar", "panel", "info bar", "status bar", "page tab list", "menu bar")
CONTROL_ROLES = ("page tab", "push button", "toggle button", "check box", "entry", "combo box", "list")
MENU_ITEM_ROLES = ("menu item", "check menu item", "radio menu item", "tearoff menu item", "menuitem",
                   "menuitemcheckbox", "menuitemradio")
HIDDEN = ("invisible", "hidden", "offscreen")


def _visible(el: UIElement, size: tuple[int, int] | None) -> bool:
    x, y, w, h = el.bbox
    if w <= 0 or h <= 0 or any(s in el.states for s in HIDDEN):
        return False
    return not (size and size[0] > 0 and (x >= size[0] or y >= size[1] or x + w <= 0 or y + h <= 0))


def _words(s: str) -> str:
    return " ".join((s or "").split())


# A time of day in a text ("19:34:57", "7:05 PM"): what a clock shows, different on every replay
_CLOCK = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?(?![\d:])")


def shows_time(text: str) -> bool:
    """Does the text hold a time of day (a file's modification time in a file list, a clock)?"""
    return bool(_CLOCK.search(text))


def same_text(got: str, want: str) -> bool:
    """A text effect holds when the text is the one recorded, a time of day in it aside: "Paste Date and
    Time" writes another time on every replay, and the date it writes is its effect all the same."""
    return got == want or (bool(_CLOCK.search(want)) and _CLOCK.sub("<time>", got) == _CLOCK.sub("<time>", want))


def tooltip(el: UIElement) -> str:
    """The tooltip the toolkit exposes as the accessible description ("Backspace" for galculator's '<-')."""
    return _words(str(el.attrs.get("description") or ""))[:80]


def element_text(el: UIElement) -> str:
    """What an element displays: its value (entries, displays, documents) exactly, whitespace included
    (indenting a line or turning tabs into spaces changes only that), or else its name."""
    return el.value if el.value is not None else _words(el.name)


def slots(obs: Observation) -> dict[str, UIElement]:
    """Visible elements by a name-free identity (ancestor path + role + order), so a display whose text
    changed is still 'the same element' (the tree's, where there is one: OCR'd text would shift the order)."""
    seen: Counter[str] = Counter()
    out: dict[str, UIElement] = {}
    for e in obs.structural():
        if not _visible(e, obs.size):
            continue
        base = "/".join(e.path) + "|" + e.role.lower()
        out[f"{base}#{seen[base]}"] = e
        seen[base] += 1
    return out


def _slot_counts(obs: Observation) -> Counter[str]:
    return Counter(s.rsplit("#", 1)[0] for s in slots(obs))


class Effect(BaseModel):
    """One observed change. `check(obs)` says whether it holds in a later observation."""

    model_config = ConfigDict(extra="forbid")
    kind: EffectKind
    signature: str = Field("", description="The element (or window) the effect is about.")
    slot: str = Field("", description="Name-free identity of the element (text effects).")
    role: str = ""
    name: str = Field("", description="What to call the element in words.")
    state: str = Field("", description="For kind=state: checked, selected, expanded or pressed.")
    before: str | bool | None = None
    after: str | bool | None = None
    members: list[str] = Field(default_factory=list, description="Signatures shown by an opened menu/bar.")
    inherited: bool = Field(False, description="Caused by the path to the control, not by the control itself.")
    tooltip: str = Field("", description="The element's tooltip (accessible description), for words only.")
    reveal: list[dict] = Field(default_factory=list,
                               description="Actions that make the element visible to check it (reopen a menu).")
    pixels: bool = Field(False, description="For kind=state: read from the indicator's pixels (a menu item "
                                            "whose toolkit exposes no checked state), not from the tree.")

    def describe(self) -> str:
        """The effect in words, e.g. "turns on Line Numbers", "display changes from 0 to 7"."""
        n = self.name or self.role or "it"
        if self.kind == "text":
            before, after = _words(str(self.before or "")), _words(str(self.after or ""))
            if before == after and self.before != self.after:
                return f"{n} changes its spacing (tabs, spaces or line breaks)"
            return f"{n} changes from {before or '(empty)'} to {after or '(empty)'}"
        if self.kind == "state":
            verbs = {"checked": ("turns on", "turns off"), "selected": ("selects", "deselects"),
                     "expanded": ("expands", "collapses"), "pressed": ("presses", "releases"),
                     "enabled": ("enables", "disables")}
            on, off = verbs.get(self.state, (f"sets {self.state} on", f"sets {self.state} off"))
            return f"{on if self.after else off} {n}"
        if self.kind == "window_opened":
            return f"opens the {self.role if self.role in ('dialog', 'alert') else 'window'} '{n}'"
        if self.kind == "window_closed":
            return f"closes the {self.role if self.role in ('dialog', 'alert') else 'window'} '{n}'"
        if self.kind == "title":
            return f"changes the window title to '{self.after}'"
        if self.kind == "focus":
            return f"moves the focus to {n}"
        if self.kind == "menu_opened":
            shown = ", ".join(s.rsplit(":", 1)[-1] for s in self.members[:4])
            return f"opens the menu '{n}'" + (f" (shows {shown}...)" if shown else "")
        said = f" ({self.tooltip})" if self.tooltip and self.tooltip.lower() != n.lower() else ""
        if self.kind == "appeared":
            return f"shows the {self.role} '{n}'{said}"
        return f"hides the {self.role} '{n}'{said}"

    def started_otherwise(self, start: dict[str, UIElement]) -> str | None:
        """A text effect's text on the start screen (its `slots`) when it is not the recorded `before` (a
        run on the user's screen: "Duplicate Line" explored on an empty document), else None."""
        was = start.get(self.slot) if self.kind == "text" else None
        return None if was is None or same_text(element_text(was), str(self.before or "")) else element_text(was)

    def check(self, obs: Observation) -> str | None:
        """None when the effect holds in `obs`, else what is wrong (in words)."""
        vis = [e for e in obs.elements if _visible(e, obs.size)]
        by_sig = {e.signature: e for e in vis}
        if self.kind == "text":
            el = slots(obs).get(self.slot)
            if el is None:
                return f"{self.name or self.role} is not on screen"
            got = element_text(el)
            return None if same_text(got, str(self.after or "")) else \
                f"{self.name or self.role} shows {got!r}, expected {self.after!r}"
        if self.kind == "state":
            el = by_sig.get(self.signature)
            if el is None:
                return f"{self.name!r} is not on screen"
            if self.pixels:
                got = pixel_mark(obs, self.signature)
                return None if got == bool(self.after) else f"{self.name!r} reads " + (
                    "no indicator" if got is None else "marked" if got else "unmarked") + \
                    f" (pixels), expected {'marked' if self.after else 'unmarked'}"
            on = is_enabled(el) if self.state == "enabled" else self.state in el.states
            return None if on == bool(self.after) else f"{self.name!r} is {'' if on else 'not '}{self.state}"
        if self.kind in ("window_opened", "appeared"):
            return None if self.signature in by_sig else f"no {self.role} {self.name!r}"
        if self.kind in ("window_closed", "disappeared"):
            return f"{self.role} {self.name!r} is still shown" if self.signature in by_sig else None
        if self.kind == "title":
            return None if title_changed(self.before, self.after, obs.window_title) else \
                f"window title is {obs.window_title!r}, expected {self.after!r}"
        if self.kind == "focus":
            el = by_sig.get(self.signature)
            return None if el is not None and "focused" in el.states else f"{self.name!r} does not have the focus"
        missing = [m for m in self.members if m not in by_sig]  # menu_opened
        return None if self.members and not missing else f"menu {self.name!r} is not open"


def title_changed(before: Any, after: Any, title: str) -> bool:
    """Whether `title` shows the change from `before` to `after`: the very title, or, when the change
    was in words (' [Viewer Mode]' added), a title with the words it added and without those it dropped.
    What the rest of the title says (another document's name, '*' for unsaved changes) is not the
    skill's effect."""
    if str(after or "") == _words(title):
        return True
    if before is None:
        return False
    was, wanted, now = (Counter(re.findall(r"[\w']+", str(t or "").lower())) for t in (before, after, title))
    added, dropped = wanted - was, was - wanted
    return bool(added or dropped) and not (added - now) and all(now[w] <= wanted[w] for w in dropped)


def effect_problems(effects: Iterable[Effect], obs: Observation, start: Observation | None = None) -> list[str]:
    """What of `effects` does not hold in `obs`. With `start` (a run on the user's screen), the texts that
    started other than recorded cannot reach the recorded result: one of them must change (Duplicate
    Line changes the document; the tab title it marked modified may be marked already)."""
    effects = list(effects)
    first = slots(start) if start is not None and any(e.kind == "text" for e in effects) else {}
    moved = {i: was for i, e in enumerate(effects) if (was := e.started_otherwise(first)) is not None}
    out = [p for i, e in enumerate(effects) if i not in moved and (p := e.check(obs)) is not None]
    now = slots(obs) if moved else {}
    if moved and not any(effects[i].slot in now and element_text(now[effects[i].slot]) != was
                         for i, was in moved.items()):
        out.append(f"{', '.join(effects[i].name or effects[i].role for i in moved)} did not change")
    return out


def pixel_mark(obs: Observation, signature: str) -> bool | None:
    """Whether the indicator at the left of an element's row is marked, read from the screenshot
    (None: the element is not on screen, shows no indicator, or there is no screenshot)."""
    el = obs.by_signature(signature)
    if el is None or not _visible(el, obs.size) or obs.screenshot is None:
        return None
    return row_mark(obs.image(), el.bbox)


def _on_screen(effect: Effect, obs: Observation) -> bool:
    el = obs.by_signature(effect.signature)
    return el is not None and _visible(el, obs.size)


def is_menu_item(e: UIElement) -> bool:
    return e.role.lower() in MENU_ITEM_ROLES or "menu item" in e.role.lower()


# Roles that declare their text changes by itself (ARIA's timer and marquee): never a control's effect, even
# before a few looks have shown it ticking (a loaded machine may look twice within one tick)
SELF_UPDATING = ("timer", "marquee")


def diff_effects(old: Observation, new: Observation, volatile_slots: set[str] | frozenset[str] = frozenset(),
                 volatile_sigs: set[str] | frozenset[str] = frozenset(), limit: int = 6) -> list[Effect]:
    """The effects that explain old -> new, strongest first (the tree's elements, where there is one). Text
    diffs of slots known to change by themselves (a clock) are left out; vanished menu items alone are not
    an effect."""
    o_vis = {e.signature: e for e in old.structural() if _visible(e, old.size) and e.signature}
    n_vis = {e.signature: e for e in new.structural() if _visible(e, new.size) and e.signature}
    out: list[Effect] = []
    # windows and dialogs
    for sig, e in n_vis.items():
        if e.role.lower() in WINDOW_ROLES and sig not in o_vis:
            out.append(Effect(kind="window_opened", signature=sig, role=e.role.lower(), name=_words(e.name)))
    for sig, e in o_vis.items():
        if e.role.lower() in WINDOW_ROLES and sig not in n_vis and e.name:
            out.append(Effect(kind="window_closed", signature=sig, role=e.role.lower(), name=_words(e.name)))
    if _words(new.window_title) != _words(old.window_title) and new.window_title:
        out.append(Effect(kind="title", before=_words(old.window_title), after=_words(new.window_title)))
    # states of the same element
    for sig, e in n_vis.items():
        o = o_vis.get(sig)
        if o is None or sig in volatile_sigs:
            continue
        for st in TOGGLE_STATES:
            if (st in o.states) != (st in e.states) and not (st == "selected" and (
                    is_menu_item(e) or e.role.lower() in ("menu", "menu bar", "page tab list"))):
                out.append(Effect(kind="state", signature=sig, role=e.role.lower(), name=_words(e.name) or e.role,
                                  state=st, before=st in o.states, after=st in e.states))
    # values and texts of the same slot (a display, a field, a label)
    o_slots, n_slots = slots(old), slots(new)
    o_count, n_count = _slot_counts(old), _slot_counts(new)
    for slot, e in n_slots.items():
        base = slot.rsplit("#", 1)[0]
        o = o_slots.get(slot)
        if o is None or slot in volatile_slots or o_count[base] != n_count[base] or is_menu_item(e) \
                or e.role.lower() in SELF_UPDATING:
            continue
        a, b = element_text(o), element_text(e)
        if a != b and (e.value is not None or o.signature != e.signature):
            label = _words(e.name) if e.value is not None and e.name else "document" if {
                "editable", "multi-line"} <= set(e.states) else ("display" if e.role.lower() in (
                    "label", "text", "static", "status bar", "paragraph") else e.role.lower())
            out.append(Effect(kind="text", slot=slot, signature=e.signature, role=e.role.lower(), name=label,
                              before=a, after=b))
    # a menu (or a bar, a panel) that opened: controls that appeared
    appeared = [e for s, e in n_vis.items() if s not in o_vis and e.role.lower() not in WINDOW_ROLES
                and s not in volatile_sigs]
    opened_window = any(x.kind == "window_opened" for x in out)  # a menu of submenus only opens one too
    items = [e for e in appeared if is_menu_item(e) or (e.role.lower() == "menu" and not opened_window)]
    if items:
        parent = items[0].path[-1] if items[0].path else ""
        out.append(Effect(kind="menu_opened", signature="", role="menu",
                          name=parent.split(":", 1)[-1], members=sorted(e.signature for e in items)[:limit]))
    elif not opened_window:
        for e in appeared:
            if e.role.lower() in BAR_ROLES + CONTROL_ROLES:
                out.append(Effect(kind="appeared", signature=e.signature, role=e.role.lower(), name=_words(e.name),
                                  tooltip=tooltip(e)))
        closed = any(x.kind == "window_closed" for x in out)  # a closed dialog's controls go with it
        for s, e in o_vis.items():
            if s not in n_vis and s not in volatile_sigs and not is_menu_item(e) and (
                    e.role.lower() in BAR_ROLES or (not closed and e.role.lower() in CONTROL_ROLES)):
                out.append(Effect(kind="disappeared", signature=s, role=e.role.lower(), name=_words(e.name),
                                  tooltip=tooltip(e)))
    if not out:  # text that appeared (a result line, a status message), when nothing else changed
        slot_of = {id(e): s for s, e in n_slots.items()}
        for e in appeared:
            if slot_of.get(id(e)) in o_slots:  # the same place showed other text: a change, not an arrival
                continue
            if _words(e.name) and not is_menu_item(e) and e.role.lower() not in ("tool tip",):
                out.append(Effect(kind="appeared", signature=e.signature, role=e.role.lower(), name=_words(e.name),
                                  tooltip=tooltip(e)))
    if not out:  # a control on screen greyed out or made usable, when nothing else changed (M+ enables MR)
        for sig, e in n_vis.items():
            o = o_vis.get(sig)
            if o is not None and sig not in volatile_sigs and _words(e.name) and e.role.lower() in CONTROL_ROLES \
                    and is_enabled(o) != is_enabled(e):
                out.append(Effect(kind="state", signature=sig, role=e.role.lower(), name=_words(e.name),
                                  state="enabled", before=is_enabled(o), after=is_enabled(e), tooltip=tooltip(e)))
    if not out:  # the weakest effect: the focus moved
        f_old = next((e.signature for e in old.elements if "focused" in e.states), None)
        f_new = next((e for e in new.elements if "focused" in e.states and _visible(e, new.size)), None)
        if f_new is not None and f_new.signature != f_old and f_new.signature not in volatile_sigs:
            out.append(Effect(kind="focus", signature=f_new.signature, role=f_new.role.lower(),
                              name=_words(f_new.name) or f_new.role))
    return out[:limit]


def skill_effects(start: Observation, pre: Observation, new: Observation, clicked: str,
                  volatile_slots: set[str] | frozenset[str] = frozenset(),
                  volatile_sigs: set[str] | frozenset[str] = frozenset()) -> list[Effect]:
    """A skill's effects: what differs from the START state (the skill replays from there), plus the
    states and values its final action changed on the screen before it (a check box in a dialog). A
    text's `before` is what it read just before the final action (only `after` is checked).
    Focus landing on the clicked element itself is no effect (every click does that)."""
    def ident(e: Effect) -> tuple:  # a submenu opened inside an open menu is not the menu's own opening
        return e.kind, e.signature, e.slot, e.state, str(e.after), tuple(e.members)

    base = diff_effects(start, new, volatile_slots, volatile_sigs)
    at_start = {e.signature for e in start.elements if _visible(e, start.size)}
    path: set[tuple] = set()
    if pre is not start:  # the path's effects, also as they show once its open menus close (a mode's keys)
        shut = pre.model_copy(update={"elements": [e for e in pre.elements if e.signature in at_start or not (
            is_menu_item(e) or e.role.lower() == "menu")]})
        path = {ident(e) for look in (pre, shut) for e in diff_effects(start, look, volatile_slots, volatile_sigs)}
        before = {s: element_text(e) for s, e in slots(pre).items()}  # a text the path changed: from there
        base = [e.model_copy(update={"before": before[e.slot]}) if e.kind == "text" and e.slot in before else e
                for e in base]
    seen = {ident(e) for e in base}
    local = [e for e in diff_effects(pre, new, volatile_slots, volatile_sigs)
             if e.kind in ("state", "text", "menu_opened", "window_opened", "window_closed", "appeared")
             and ident(e) not in seen and not (e.kind == "appeared" and e.signature in at_start)]
    out = [e.model_copy(update={"inherited": ident(e) in path}) for e in base + local
           if not (e.kind == "focus" and e.signature == clicked)]
    name = next((_words(e.name) for e in pre.elements if e.signature == clicked), "")
    out = [e.model_copy(update={"name": name}) if e.kind == "menu_opened" and not e.inherited and name else e
           for e in out]
    return sorted(out, key=lambda e: e.inherited)


def volatile_slots_of(a: Observation, b: Observation) -> set[str]:
    """Slots whose text differs between two looks at the same screen: they change by themselves."""
    sa, sb = slots(a), slots(b)
    return {s for s in sa.keys() & sb.keys() if element_text(sa[s]) != element_text(sb[s])}


def own_effects(effects: Iterable[Effect]) -> list[Effect]:
    """The control's own effects, not its path's; all of them when none is its own."""
    effects = list(effects)
    return [e for e in effects if not e.inherited] or effects


def summary(effects: Iterable[Effect]) -> str:
    """The effects in words, joined: the control's own effects, or all when none is its own; the menu
    items it enabled or disabled only when it did nothing else (Copy: "enables Paste")."""
    return "; ".join(e.describe() for e in main_effects(own_effects(effects)))


def main_effects(effects: Iterable[Effect]) -> list[Effect]:
    """The effects less the menu items they enabled or disabled, unless that is all there is."""
    effects = list(effects)
    return [e for e in effects if e.state != "enabled"] or effects


def check_revealed(env: Any, effects: list[Effect], obs: Observation, close: bool = True,
                   start: Observation | None = None) -> tuple[Observation, list[str]]:
    """Check effects whose element is hidden until revealed (a check menu item inside a closed menu):
    replay their `reveal` clicks, look, then close what was opened with Escape (unless not `close`).
    `start`: the screen a run on the user's screen began on (effect_problems)."""
    problems = effect_problems([e for e in effects if not e.reveal], obs, start)  # before anything reopens
    obs, missed = revealed_problems(env, effects, obs, close)
    return obs, problems + list(missed.values())


REVEAL_WAIT = 1.0  # seconds a menu the previous reveal click opens may take to show the next target


def _reveal_point(env: Any, action: dict[str, Any], obs: Observation) -> tuple[Observation, tuple[int, int]]:
    """Where a reveal click's target is, looking again (bounded) while the menu before it opens."""
    obs, hit = find(env, Target.model_validate(action["target"]), REVEAL_WAIT, obs)
    return obs, hit.point


def revealed_problems(env: Any, effects: list[Effect], obs: Observation, close: bool = True
                      ) -> tuple[Observation, dict[int, str]]:
    """The problems of the `reveal` effects among `effects`, by index: each distinct reveal path (the
    clicks that open the closed menu) is opened once for all effects that share it (the languages of one
    submenu), looked at until their items are on screen (a menu may still be opening; 8 looks at most),
    and closed. An item on screen shows its state at once: looking again for a state that does not hold
    (every negative control) had cost a quarter of a mousepad exploration's time. Not `close`: the
    last group's menus are left open (a verification replay, which a reset follows)."""
    groups: dict[str, list[int]] = {}
    for i, eff in enumerate(effects):
        if eff.reveal and eff.check(obs) is not None:
            groups.setdefault(json.dumps(eff.reveal, sort_keys=True), []).append(i)
    missed: dict[int, str] = {}
    for n, idxs in enumerate(groups.values()):
        opened = 0
        for a in effects[idxs[0]].reveal:
            if scrolled_already(a, obs):  # a long menu that kept its offset (skills.runner does the same)
                continue
            try:
                obs, (x, y) = _reveal_point(env, a, obs)
            except (GroundingError, KeyError, ValueError) as e:
                missed.update({i: f"cannot reveal {effects[i].name!r}: {e}" for i in idxs})
                break
            env.act(action_from_dict({k: v for k, v in a.items() if k != "target"} | {"x": x, "y": y}))
            opened += a.get("kind") != "scroll"
            obs = env.observe()
        else:  # the menu may still be opening: look again until its items are on screen (8 looks at most)
            looks = 8
            while looks and not all(_on_screen(effects[i], obs) for i in idxs) and \
                    any(effects[i].check(obs) is not None for i in idxs):
                obs, looks = env.observe(), looks - 1
            missed.update({i: p for i in idxs if (p := effects[i].check(obs)) is not None})
        if not close and n == len(groups) - 1:
            break
        for _ in range(opened):
            env.act(Key(key="esc"))
        obs = env.observe()
    return obs, missed
