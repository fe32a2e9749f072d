"""Training data for the vision detector: screenshots labelled automatically by DOM / AT-SPI boxes.

MiniWoB++ task pages (shipped by the `miniwob` package) are rendered in headless /usr/bin/chromium at
random zoom, position and background; mousepad screens (main window, menus, dialogs) come from the
sandbox desktop's accessibility tree. Output: DIR/images/*.png and DIR/labels.jsonl, one line per
screen: {"image", "split", "source", "task", "size": [W, H], "boxes": [[x, y, w, h, class_id], ...]}.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterator
from pathlib import Path

from PIL import Image

from cua.env.xauth import browser_env
from cua.perception.detect import CLASSES

log = logging.getLogger(__name__)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
SCREEN = (1280, 800)
# Held out for validation, by task name (never trained on).
VAL_TASKS = {
    "click-button", "click-checkboxes", "click-dialog-2", "click-tab-2", "enter-password", "login-user-popup",
    "book-flight", "email-inbox-reply", "social-media-some", "use-spinner", "click-option", "form-sequence-2",
    "search-engine", "choose-list", "click-menu", "text-transform",
}
# Canvas/SVG drawing tasks: their targets are not DOM controls, so DOM labels would be wrong.
SKIP_TASKS = {
    "bisect-angle", "chase-circle", "circle-center", "click-pie", "click-pie-nodelay", "click-shape", "count-shape",
    "count-sides", "draw-circle", "draw-line", "find-midpoint", "grid-coordinate", "identify-shape", "right-angle",
    "visual-addition", "moving-items", "drag-cube", "drag-shapes", "drag-shapes-2", "drag-single-shape",
    "drag-circle", "hover-shape", "use-colorwheel", "use-colorwheel-2", "click-shades", "click-color", "simon-says",
    "stock-market",  # its price chart moves with the clock: two collections would differ, and no run reproduce
}

# DOM -> class id. Runs in the page; returns [[x, y, w, h, cls], ...] of visible, unoccluded controls.
DOM_BOXES_JS = """
() => {
  const out = [];
  const role = (el) => {
    const t = el.tagName.toLowerCase(), r = (el.getAttribute('role') || '').toLowerCase();
    const ty = (el.getAttribute('type') || 'text').toLowerCase();
    if (el.closest('svg')) return -1;
    if (t === 'button' || r === 'button' || (t === 'input' && ['button','submit','reset','image'].includes(ty))) return 0;
    if (t === 'input' && ty === 'checkbox' || r === 'checkbox') return 2;
    if (t === 'input' && ty === 'radio' || r === 'radio') return 3;
    if (t === 'input' && ['range','color','file','hidden'].includes(ty)) return -1;
    if (t === 'input' || t === 'textarea' || el.isContentEditable || r === 'textbox' || r === 'spinbutton') return 1;
    if (t === 'select' || r === 'combobox' || r === 'listbox') return 4;
    if (['menuitem','tab','option','treeitem'].includes(r)) return 5;
    if (t === 'a' || r === 'link') return 6;
    const cs = getComputedStyle(el);
    if (cs.cursor === 'pointer' && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer')) return 6;
    return -1;
  };
  const W = innerWidth, H = innerHeight;
  for (const el of document.querySelectorAll('body *')) {
    const c = role(el);
    if (c < 0) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || cs.display === 'none' || parseFloat(cs.opacity) < 0.1) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 5 || r.height < 5 || r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H) continue;
    const cx = Math.min(Math.max(r.left + r.width / 2, 0), W - 1), cy = Math.min(Math.max(r.top + r.height / 2, 0), H - 1);
    const hit = document.elementFromPoint(cx, cy);
    if (!hit || !(hit === el || el.contains(hit) || hit.contains(el) && hit.tagName === 'LABEL')) continue;
    const x = Math.max(0, r.left), y = Math.max(0, r.top);
    out.push([Math.round(x), Math.round(y), Math.round(Math.min(r.right, W) - x), Math.round(Math.min(r.bottom, H) - y), c]);
  }
  return out;
}
"""

# Seeds the task, regenerates it, and restyles the page (zoom, position, background) for variety.
LAYOUT_JS = """
([seed, zoom, left, top, bg, hideReward]) => {
  Math.seedrandom(String(seed));
  try { core.startEpisodeReal(); } catch (e) { return String(e); }
  if (core.EP_TIMER !== null) { clearTimeout(core.EP_TIMER); core.EP_TIMER = null; }
  document.body.style.background = bg;
  const wrap = document.getElementById('wrap');
  wrap.style.position = 'absolute'; wrap.style.left = left + 'px'; wrap.style.top = top + 'px';
  wrap.style.transformOrigin = '0 0'; wrap.style.transform = 'scale(' + zoom + ')';
  const rd = document.getElementById('reward-display');
  if (rd) rd.style.display = 'none';
  const cover = document.getElementById('sync-task-cover');
  if (cover) cover.style.display = 'none';
  return '';
}
"""


def miniwob_pages() -> list[Path]:
    """The MiniWoB++ task pages shipped in the `miniwob` package (html/miniwob/*.html)."""
    import miniwob

    root = Path(miniwob.__file__).resolve().parent / "html" / "miniwob"
    pages = sorted(root.glob("*.html"))
    if not pages:
        raise FileNotFoundError(f"no MiniWoB++ pages under {root}; reinstall the `miniwob` package")
    return pages


def _write(out: Path, name: str, image: Image.Image, record: dict, sink) -> None:
    path = out / "images" / f"{name}.png"
    image.save(path)
    record = {"image": f"images/{name}.png", "size": list(image.size), **record}
    sink.write(json.dumps(record) + "\n")
    sink.flush()


def collect_miniwob(out: Path, seeds: int = 6, tasks: int | None = None,
                    progress: Callable[[int, int], None] | None = None, rng_seed: int = 0,
                    only: set[str] | None = None) -> int:
    """Render `seeds` variants of each MiniWoB++ task (or of the `only` tasks); returns screens written."""
    from playwright.sync_api import sync_playwright

    pages = [p for p in miniwob_pages() if p.stem not in SKIP_TASKS and (only is None or p.stem in only)]
    pages = pages[: tasks or None]
    (out / "images").mkdir(parents=True, exist_ok=True)
    written = 0
    with sync_playwright() as pw, (out / "labels.jsonl").open("a") as sink:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                                     env=browser_env())  # the allow-list: no API keys or tokens
        try:
            page = browser.new_page(viewport={"width": SCREEN[0], "height": SCREEN[1]})
            for ti, html in enumerate(pages):
                try:
                    page.goto(html.as_uri(), wait_until="load", timeout=15000)
                except Exception as exc:  # noqa: BLE001 -- a broken page must not stop the collection
                    log.warning("skip %s: %s", html.stem, exc)
                    continue
                for s in range(seeds):
                    rng = random.Random(f"{rng_seed}:{html.stem}:{s}")  # one screen's layout: same with any `only`
                    zoom = 1.0 + 2.2 * rng.random() ** 1.5
                    left = rng.randint(0, max(0, int(SCREEN[0] - 165 * zoom)))
                    top = rng.randint(0, max(0, int(SCREEN[1] - 215 * zoom)))
                    grey = rng.randint(40, 235)
                    bg = rng.choice([f"rgb({grey},{grey},{grey})", "#555", "#fff", f"hsl({rng.randint(0, 359)},30%,70%)"])
                    err = page.evaluate(LAYOUT_JS, [s * 7919 + ti, zoom, left, top, bg, rng.random() < 0.5])
                    if err:
                        log.warning("skip %s seed %d: %s", html.stem, s, err)
                        break
                    boxes = page.evaluate(DOM_BOXES_JS)
                    if not boxes:
                        continue
                    import io

                    image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
                    split = "val" if html.stem in VAL_TASKS else "train"
                    rec = {"split": split, "source": "miniwob", "task": html.stem, "boxes": boxes}
                    _write(out, f"miniwob-{html.stem}-{s}", image, rec, sink)
                    written += 1
                if progress:
                    progress(ti + 1, len(pages))
        finally:
            browser.close()
    return written


# AT-SPI role -> class id for mousepad's accessibility tree.
A11Y_CLASS = {
    "push button": 0, "toggle button": 0, "button": 0,
    "text": 1, "entry": 1, "password text": 1, "spin button": 1, "editbar": 1,
    "check box": 2, "check menu item": 5, "radio button": 3, "radio menu item": 5,
    "combo box": 4, "menu item": 5, "menu": 5, "page tab": 5, "link": 6,
}


def mousepad_screens(env) -> Iterator[tuple[str, object]]:
    """Walk mousepad: main window, every menu, submenus, dialogs, then again with the toolbar shown.

    Yields (screen name, Observation); names are unique, so splits can be chosen by name.
    """
    from cua.actions import action_from_dict

    def act(d: dict) -> None:
        env.act(action_from_dict(d))

    def click(el) -> None:
        act({"kind": "click", "x": el.center[0], "y": el.center[1]})

    def find(obs, name: str, roles: tuple[str, ...] = ("menu", "menu item")):
        return next((e for e in obs.elements if e.name == name and e.role in roles), None)

    def close() -> None:
        act({"kind": "key", "key": "esc"})
        act({"kind": "key", "key": "esc"})

    def stable():
        return _stable(env)

    obs = env.reset()
    act({"kind": "type", "text": "The quick brown fox\njumps over the lazy dog.\n"})
    for tag in ("", "-toolbar"):
        obs = stable()
        yield f"main{tag}", obs
        bar = [e for e in obs.elements if e.role == "menu" and e.name and e.bbox[1] < 80]
        for m in bar:
            click(m)
            menu = stable()
            yield f"menu-{m.name}{tag}", menu
            sub = next((e for e in menu.elements if e.role == "menu" and e.bbox[1] > m.bbox[1] + 5), None)
            if sub is not None and not tag:
                act({"kind": "move", "x": sub.center[0], "y": sub.center[1]})
                yield f"submenu-{m.name}-{sub.name}", stable()
            close()
        for name, keys in [("find", ["ctrl", "f"]), ("replace", ["ctrl", "r"]), ("goto", ["ctrl", "l"])]:
            act({"kind": "hotkey", "keys": keys})
            yield f"dialog-{name}{tag}", stable()
            close()
        if tag:
            break
        # (no Open / Save As screens: their file lists show modification times, so no two collections agree)
        for name, keys in [("print", ["ctrl", "p"])]:
            act({"kind": "hotkey", "keys": keys})
            yield f"dialog-{name}", stable()
            close()
        for menu_name, item in [("Edit", "Preferences..."), ("View", "Select Font..."), ("Help", "About"),
                                ("View", "Toolbar"), ("View", "Line Numbers"), ("View", "Statusbar")]:
            m = find(env.observe(), menu_name, ("menu",))
            if m is None:
                continue
            click(m)
            it = find(env.observe(), item)
            if it is None:
                close()
                continue
            click(it)
            if item.endswith("...") or item == "About":
                yield f"dialog-{item.strip('.').replace(' ', '-').lower()}", stable()
                close()


# Held-out mousepad windows (never in a training screen): the Search menu, the search bar (ctrl+f), the
# Go To, Print and About dialogs. A held-out screen is scored only inside that window (`region`): the
# main window around it is in the training screens.
VAL_PREFIXES = ("dialog-find", "dialog-goto", "menu-Search", "submenu-Search", "dialog-print", "dialog-about")
WINDOW_ROLES = ("dialog", "alert", "file chooser", "window")


def heldout_region(name: str, obs) -> list[int] | None:
    """The box [x, y, w, h] of the held-out window a val screen shows (None: not found on screen)."""
    els = [e for e in obs.elements if e.bbox[2] > 0 and e.bbox[3] > 0]
    if name.startswith(("menu-", "submenu-")):
        items = [e for e in els if "menu item" in e.role and e.bbox[1] > 40]
        if not items:
            return None
        x0, y0 = min(e.bbox[0] for e in items), min(e.bbox[1] for e in items)
        x1, y1 = max(e.bbox[0] + e.bbox[2] for e in items), max(e.bbox[1] + e.bbox[3] for e in items)
        return [x0, y0, x1 - x0, y1 - y0]
    if name.startswith("dialog-find"):  # mousepad's search bar: a tool bar at the bottom of the window
        bars = [e for e in els if e.role == "tool bar" and e.bbox[1] > obs.image().size[1] // 2]
        return list(bars[-1].bbox) if bars else None
    wins = [e for e in els if e.role in WINDOW_ROLES]
    return list(wins[-1].bbox) if wins else None


def inside(box, region) -> bool:
    """The box's centre lies in the region."""
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    return region[0] <= cx < region[0] + region[2] and region[1] <= cy < region[1] + region[3]


def heldout_mousepad_screens(env) -> Iterator[tuple[str, object, list[int]]]:
    """Only the held-out windows, each with its region: (name, Observation, [x, y, w, h])."""
    from cua.actions import action_from_dict

    env.reset()
    env.act(action_from_dict({"kind": "type", "text": "The quick brown fox\njumps over the lazy dog.\n"}))
    opens = [("menu-Search", [{"kind": "click", "target": {"text": "Search", "role": "menu"}}]),
             ("dialog-find", [{"kind": "hotkey", "keys": ["ctrl", "f"]}]),
             ("dialog-goto", [{"kind": "hotkey", "keys": ["ctrl", "l"]}]),
             ("dialog-print", [{"kind": "hotkey", "keys": ["ctrl", "p"]}]),
             ("dialog-about", [{"kind": "click", "target": {"text": "Help", "role": "menu"}},
                               {"kind": "click", "target": {"text": "About", "role": "menu item"}}])]
    for name, actions in opens:
        for a in actions:
            env.observe()
            env.act(action_from_dict(a))
        obs = _stable(env)
        region = heldout_region(name, obs)
        if region is not None:
            yield name, obs, region
        for _ in range(2):
            env.act(action_from_dict({"kind": "key", "key": "esc"}))


def _stable(env):
    """Observe until two looks agree (pixels and boxes): labels must describe the pixels they go with."""
    last = env.observe()
    for _ in range(6):
        obs = env.observe()
        if obs.image_hash() == last.image_hash() and [e.bbox for e in obs.elements] == [e.bbox for e in last.elements]:
            return obs
        last = obs
    return last


def mousepad_boxes(obs, region: list[int] | None = None) -> list[list[int]]:
    """AT-SPI boxes of the controls the detector learns (inside `region` when given)."""
    W, H = obs.image().size
    return [[*e.bbox, A11Y_CLASS[e.role]] for e in obs.elements
            if e.role in A11Y_CLASS and 5 <= e.bbox[2] and 5 <= e.bbox[3] <= 200  # no document areas
            and e.bbox[2] * e.bbox[3] < 0.2 * W * H and (region is None or inside(e.bbox, region))]


def collect_mousepad(out: Path, val_prefixes: tuple[str, ...] = VAL_PREFIXES) -> int:
    """Screens of sandbox mousepad labelled by AT-SPI boxes; windows in `val_prefixes` go to 'val', each
    labelled (and later scored) only inside its held-out window."""
    from cua.env import make_env

    (out / "images").mkdir(parents=True, exist_ok=True)
    written = 0
    with make_env("sandbox:mousepad", sources="a11y") as env, (out / "labels.jsonl").open("a") as sink:
        for name, obs in mousepad_screens(env):
            split = "val" if name.startswith(val_prefixes) else "train"
            region = heldout_region(name, obs) if split == "val" else None
            if split == "val" and region is None:
                continue
            if _write_mousepad(out, name, obs, split, region, sink):
                written += 1
    return written


def collect_heldout_mousepad(out: Path) -> int:
    """Only the held-out mousepad windows (the detector's check set), labelled inside their windows."""
    from cua.env import make_env

    (out / "images").mkdir(parents=True, exist_ok=True)
    with make_env("sandbox:mousepad", sources="a11y") as env, (out / "labels.jsonl").open("a") as sink:
        return sum(_write_mousepad(out, name, obs, "val", region, sink)
                   for name, obs, region in heldout_mousepad_screens(env))


def _write_mousepad(out: Path, name: str, obs, split: str, region: list[int] | None, sink) -> bool:
    boxes = mousepad_boxes(obs, region)
    if not boxes:
        return False
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    rec = {"split": split, "source": "mousepad", "task": name, "boxes": boxes, **({"region": region} if region else {})}
    _write(out, f"mousepad-{safe}", obs.image().convert("RGB"), rec, sink)
    return True


def load_labels(data: Path, split: str | None = None) -> list[dict]:
    """Records of DIR/labels.jsonl (optionally one split); image paths made absolute."""
    path = Path(data) / "labels.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no {path}; collect first: python -m cua.perception.detect_train --collect-only")
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in recs:
        r["image"] = str(Path(data) / r["image"])
    return [r for r in recs if split is None or r["split"] == split]


__all__ = ["CLASSES", "VAL_PREFIXES", "VAL_TASKS", "collect_heldout_mousepad", "collect_miniwob", "collect_mousepad",
           "heldout_mousepad_screens", "load_labels", "miniwob_pages"]
