"""Per-app explorer profiles (skills/profiles/<app>.toml) and what counts as a candidate control to try."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from cua.perception.elements import Observation, UIElement
from skills.graph import is_visible

PROFILE_DIR = Path(__file__).parent / "profiles"

# Roles worth clicking, in the order tried (menus first: cheap to back out of).
CLICK_ROLES = ("menu", "menu item", "check menu item", "radio menu item", "push button", "toggle button",
               "page tab", "check box", "radio button", "combo box", "link", "spin button", "tool bar button")
TYPE_ROLES = ("entry", "text field", "password text", "search box", "textbox", "searchbox")


@dataclass
class Profile:
    app: str = "default"
    deny: list[str] = field(default_factory=list)
    no_descend: list[str] = field(default_factory=list)
    sample_text: str = "hello"
    max_depth: int = 4
    _deny_re: list[re.Pattern] = field(default_factory=list, repr=False)
    _nod_re: list[re.Pattern] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._deny_re = [re.compile(p, re.IGNORECASE) for p in self.deny]
        self._nod_re = [re.compile(p, re.IGNORECASE) for p in self.no_descend]

    def denied(self, name: str) -> str | None:
        """The deny pattern `name` matches, or None."""
        name = clean_name(name)
        return next((p.pattern for p in self._deny_re if p.search(name)), None)

    def descend(self, name: str) -> bool:
        name = clean_name(name)
        return not any(p.search(name) for p in self._nod_re)


def clean_name(name: str) -> str:
    """Accessible names carry accelerator padding ('New      '); strip it."""
    return " ".join((name or "").split())


def shown_name(el: UIElement) -> str:
    """A control's name: its accessible name, or for an unnamed icon button its tooltip (the accessible
    description) less the shortcut it names ("Match Case (F5)" -> "Match Case")."""
    name = clean_name(el.name)
    if name or role_kind(el) != "click":
        return name
    tip = clean_name(str(el.attrs.get("description") or ""))
    return re.sub(r"\s*\([^()]*\)$", "", tip)[:60].strip()


def load_profile(app: str, path: str | Path | None = None) -> Profile:
    """The profile for `app` (skills/profiles/<app>.toml, else default.toml), or the file at `path`."""
    if path is None:
        stem = Path(app.split()[0]).name if app else "default"
        path = PROFILE_DIR / f"{stem}.toml"
        if not path.exists():
            path = PROFILE_DIR / "default.toml"
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"explorer profile {path} does not exist; see {PROFILE_DIR} for examples") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"explorer profile {path} is not valid TOML: {e}") from None
    unknown = set(data) - {"deny", "no_descend", "sample_text", "max_depth"}
    if unknown:
        raise ValueError(f"explorer profile {path}: unknown key(s) {sorted(unknown)}; "
                         "allowed: deny, no_descend, sample_text, max_depth")
    try:
        return Profile(app=app or "default", deny=list(data.get("deny", [])),
                       no_descend=list(data.get("no_descend", [])),
                       sample_text=str(data.get("sample_text", "hello")), max_depth=int(data.get("max_depth", 4)))
    except re.error as e:
        raise ValueError(f"explorer profile {path}: bad regular expression ({e})") from None


def role_kind(el: UIElement) -> str | None:
    """'click', 'type' or None (not interactable) for an element's role."""
    role = el.role.lower()
    if role in CLICK_ROLES or "button" in role or "menu item" in role:
        return "click"
    if role in TYPE_ROLES or (role == "text" and "editable" in el.states):  # AT-SPI entries are "text"
        return "type"
    return None


def is_enabled(el: UIElement) -> bool:
    """Not greyed out: no disabled/insensitive state, and (when states are reported) enabled or sensitive."""
    if any(s in el.states for s in ("disabled", "insensitive")):
        return False
    return not el.states or "enabled" in el.states or "sensitive" in el.states or el.source not in ("a11y", "dom")


def candidates(obs: Observation, only: set[str] | None = None) -> list[UIElement]:
    """Visible, enabled, named clickable elements (containers of other candidates left out), in order."""
    seen, out = set(), []
    for e in obs.elements:
        if not e.signature or e.signature in seen or not is_visible(e, obs.size) or not is_enabled(e):
            continue
        if only is not None and e.signature not in only:
            continue
        if role_kind(e) != "click" or not clean_name(e.name):
            continue
        seen.add(e.signature)
        out.append(e)
    return [e for e in out if not any(o is not e and _inside(o.bbox, e.bbox) for o in out)]


def _inside(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    """`inner` lies within `outer` and is smaller: `outer` is a container, not a control."""
    ix, iy, iw, ih = inner
    ox, oy, ow, oh = outer
    return ox <= ix and oy <= iy and ix + iw <= ox + ow and iy + ih <= oy + oh and iw * ih < ow * oh


def scroll_edge(obs: Observation) -> UIElement | None:
    """Where to scroll a menu longer than the screen (one cut by the screen's bottom), if any: its item
    nearest the screen's middle. Not the cut item: that one lies under the menu's scroll arrow, and GTK
    scrolls a menu to its end while the pointer rests on the arrow, so the items between never show."""
    items = [e for e in obs.elements if "menu item" in e.role and is_visible(e, obs.size)]
    cut = [e for e in items if obs.size[1] and e.bbox[1] + e.bbox[3] >= obs.size[1] - 2]
    if not cut:
        return None
    menu, covered = max(cut, key=lambda e: e.bbox[1]).path, under_arrows(obs)
    clear = [e for e in items if e.path == menu and e.signature not in covered]
    return min(clear, key=lambda e: abs(e.center[1] - obs.size[1] / 2)) if clear else None


def under_arrows(obs: Observation) -> set[str]:
    """Menu items a long menu's scroll arrows cover (within an item's height of the screen's bottom
    while the menu is cut there, of its top once it is scrolled): a click there scrolls, it does not
    choose. A scroll moves them clear (skills.explorer scrolls by a screen less a few items)."""
    height = obs.size[1]
    menus: dict[tuple[str, ...], list[UIElement]] = {}
    hidden: set[tuple[str, ...]] = set()  # menus with rows off screen (GTK lists them with no size)
    for e in obs.elements:
        if "menu item" in e.role:
            if is_visible(e, obs.size):
                menus.setdefault(tuple(e.path), []).append(e)
            else:
                hidden.add(tuple(e.path))
    out = set()
    for path, items in menus.items():
        band = sorted(e.bbox[3] for e in items)[len(items) // 2]
        bottom = any(e.bbox[1] + e.bbox[3] >= height - 2 for e in items)
        top = any(e.bbox[1] <= 2 and (e.bbox[3] < band or path in hidden) for e in items)  # scrolled
        out |= {e.signature for e in items if (bottom and e.bbox[1] + e.bbox[3] > height - band)
                or (top and e.bbox[1] < band)}
    return out


def scrolled_already(action: dict, obs: Observation) -> bool:
    """A long menu's scroll step whose item is not on screen: the menu kept its offset from an earlier
    opening (GTK does) and shows that part already; scrolling again would pass the items to click."""
    if action.get("kind") != "scroll":
        return False
    el = obs.by_signature((action.get("target") or {}).get("signature", ""))
    return el is None or not is_visible(el, obs.size)
