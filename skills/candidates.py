"""What the explorer tries in a state, with the default profile: every kind of actionable control.

Menus and menu items, push/toggle buttons (keypads too), check boxes, radio buttons, combo boxes
(their popups become states whose options are tried), spin buttons, sliders, tabs, links, tool-bar
buttons; list, tree and table items (all of a short list, an even spread of a long one); text fields
typed with a sample value of the right kind; and the main content area: typed into when it is editable
(a document: two lines, mixed case), right-clicked for its context menu (a web page's document is the
largest multi-line field).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from cua.perception.elements import Observation, UIElement
from skills.graph import is_visible
from skills.profile import Profile, clean_name, is_enabled, role_kind, shown_name

ITEM_ROLES = ("list item", "table cell", "tree item", "table row", "tree table cell", "option", "row",
              "gridcell", "treeitem", "listitem")
SLIDER_ROLES = ("slider", "scroll bar")
FIELD_ROLES = ("entry", "text field", "password text", "search box", "textbox", "searchbox", "spin button",
               "spinbutton", "combobox")
CONTENT_ROLES = ("text", "document frame", "document text", "canvas", "drawing area", "terminal", "document web")
SAMPLES_PER_LIST = 6


@dataclass
class Candidate:
    el: UIElement
    kind: str  # click | right_click | type | scroll | choose (an option of a web page's drop-down)
    text: str = ""

    @property
    def label(self) -> str:
        """How a UI path names it: the control's name or tooltip (or role; an unnamed multi-line text is
        the document, apart from an unnamed one-line field), prefixed for the non-click kinds."""
        label = shown_name(self.el) or ("document" if "multi-line" in self.el.states else self.el.role)
        return label if self.kind == "click" else f"{self.kind.replace('_', '-')} {label}"

    @property
    def labels(self) -> list[str]:
        """The UI path's names for it: the drop-down, then the option, for a choice; else its label."""
        return [clean_name(self.el.name) or self.el.role, self.text] if self.kind == "choose" else [self.label]

    @property
    def key(self) -> str:
        """What the graph records as tried: the signature, prefixed for the non-click kinds."""
        if self.kind == "choose":
            return f"choose:{self.el.signature}:{self.text}"
        return self.el.signature if self.kind == "click" else f"{self.kind}:{self.el.signature}"


def sample_value(el: UIElement, profile: Profile) -> str:
    """A typed value that fits the field: a number for spin buttons and numeric fields, else text; for a
    multi-line text, three lines of mixed case in neither sorted order (so case commands and sorting
    either way change it), the second ending in spaces, the last indented by a tab and eight spaces (so
    indenting, tabs-to-spaces and back, and stripping trailing spaces change it). Only the last line is
    indented: an editor that indents a new line like the one before would change the others."""
    if "multi-line" in el.states:
        return f"{profile.sample_text} World\nzoo  \n\t        abc def"
    hint = f"{el.role} {el.name} {el.attrs.get('type', '')}".lower()
    if "spin" in hint or "number" in hint or "size" in hint or "count" in hint or \
            (el.value or "").replace(".", "", 1).strip().isdigit():
        return "7"
    if "mail" in hint:
        return "user@example.com"
    if "url" in hint or "address" in hint or "location" in hint:
        return "https://example.com/"
    if "date" in hint:
        return "2024-01-31"
    return profile.sample_text


def _is_field(e: UIElement) -> bool:
    role = e.role.lower()
    editable = "editable" in e.states
    if role in ("text",) and editable and "multi-line" not in e.states:
        return True
    return role in FIELD_ROLES and (editable or e.source == "dom" or "spin" in role)


def _inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    ix, iy, iw, ih = inner
    ox, oy, ow, oh = outer
    return ox <= ix and oy <= iy and ix + iw <= ox + ow and iy + ih <= oy + oh and iw * ih < ow * oh


def _sample(items: list, k: int = SAMPLES_PER_LIST) -> list:
    """All of a short list; `k` evenly spread items of a long one, both ends included (bounded sampling)."""
    if len(items) <= k:
        return items
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def candidates(obs: Observation, profile: Profile, only: set[str] | None = None,
               depth: int = 0) -> list[Candidate]:
    """Every actionable control of one state, in the order tried (menus first: cheap to back out of)."""
    seen: set[str] = set()
    clicks: list[UIElement] = []
    fields: list[UIElement] = []
    lists: dict[str, list[UIElement]] = defaultdict(list)
    content: list[UIElement] = []
    for e in obs.elements:
        if not e.signature or e.signature in seen or not is_visible(e, obs.size) or not is_enabled(e):
            continue
        if only is not None and e.signature not in only:
            continue
        seen.add(e.signature)
        role = e.role.lower()
        if _is_field(e):
            fields.append(e)
        elif role in ITEM_ROLES and clean_name(e.name):
            lists["/".join(e.path)].append(e)
        elif role in SLIDER_ROLES and role != "scroll bar":
            clicks.append(e)
        elif role_kind(e) == "click" and shown_name(e):
            clicks.append(e)
        elif depth == 0 and role in CONTENT_ROLES and e.bbox[2] * e.bbox[3] > 0.15 * max(1, obs.size[0] * obs.size[1]):
            content.append(e)
    clicks = [e for e in clicks if not any(o is not e and _inside(o.bbox, e.bbox) for o in clicks)]
    menus = [e for e in clicks if "menu" in e.role.lower()]
    others = [e for e in clicks if "menu" not in e.role.lower()]
    out = [Candidate(e, "click") for e in menus + others if not e.attrs.get("options")]
    for e in others:  # a web page's drop-down shows its options in a native popup: chosen by typing
        out += [Candidate(e, "choose", o) for o in _sample(list(dict.fromkeys(e.attrs.get("options") or ())))]
    for items in lists.values():
        out += [Candidate(e, "click") for e in _sample(items)]
    out += [Candidate(e, "type", sample_value(e, profile)) for e in fields]
    out += [Candidate(e, "type", sample_value(e, profile)) for e in content[:1] if "editable" in e.states]
    docs = [e for e in fields if "multi-line" in e.states and depth == 0]
    out += [Candidate(e, "right_click") for e in (content or sorted(docs, key=lambda e: -e.bbox[2] * e.bbox[3]))[:1]]
    return out


def steps_for(c: Candidate) -> list[dict[str, Any]]:
    """Our JSON actions that perform a candidate, targets by signature (plus text/role to re-ground)."""
    target = {"signature": c.el.signature, "text": clean_name(c.el.name) or None, "role": c.el.role}
    target = {k: v for k, v in target.items() if v}
    if c.kind == "type":
        return [{"kind": "click", "target": target}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
                {"kind": "type", "text": c.text}]
    if c.kind == "choose":  # open it, type the option's text (the popup's type-ahead), Enter
        return [{"kind": "click", "target": target}, {"kind": "type", "text": c.text}, {"kind": "key", "key": "enter"}]
    if c.kind == "right_click":
        return [{"kind": "right_click", "target": target}]
    if c.el.role.lower() in SLIDER_ROLES:  # a slider: click three quarters along it
        x, y, w, h = c.el.bbox
        return [{"kind": "click", "x": x + (3 * w) // 4 if w >= h else x + w // 2,
                 "y": y + h // 2 if w >= h else y + (3 * h) // 4}]
    return [{"kind": "click", "target": target}]


INTERACTIVE = ("button", "menu", "check", "radio", "combo", "tab", "link", "entry", "text", "slider", "spin",
               "list item", "table cell", "tree item", "scroll", "toggle", "document", "terminal", "canvas",
               "option", "list", "tree", "table", "search", "timer")


def neutral_point(obs: Observation) -> tuple[int, int] | None:
    """A point inside the front window that no interactive element covers (a click there does nothing)."""
    vis = [e for e in obs.elements if is_visible(e, obs.size)]
    wins = [e for e in vis if e.role.lower() in ("dialog", "alert", "frame", "window", "file chooser")]
    if not any(e.role.lower() in ("dialog", "alert") for e in wins) and obs.size[0] > 0:
        wins = [*wins, UIElement(id="screen", role="window", bbox=(0, 0, *obs.size), source="vision")]
    busy = [e for e in vis if any(w in e.role.lower() for w in INTERACTIVE)]
    for win in reversed(wins):  # the last-listed window is the front one (a dialog over its frame)
        x, y, w, h = win.bbox
        for fx, fy in NEUTRAL_SPOTS:
            px, py = int(x + fx * w), int(y + fy * h)
            if not any(b.contains(px, py) for b in busy):
                return px, py
    return None


# where a neutral spot is looked for in a window, as fractions of its size: a few likely empty places
# first, then a grid fine enough to find a strip between controls (a maximized editor's text view
# leaves only its title bar and an info bar's label free)
NEUTRAL_SPOTS = [(fx, fy) for fy in (0.97, 0.5, 0.85, 0.15, 0.3, 0.7) for fx in (0.5, 0.97, 0.03, 0.25, 0.75)] + \
    [(fx / 8, fy / 80) for fy in range(1, 80) for fx in (4, 1, 7, 2, 6)]
