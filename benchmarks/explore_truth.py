"""Ground truth for explore_bench: every actionable control reachable from an app's start state, by role.

Independent of the explorer: it imports nothing from `skills` or `cua.perception`. Desktop apps are
walked through AT-SPI by the system python (pyatspi), the whole tree including closed menus; web
apps through the DOM by Playwright, hidden dialogs included. Each control is (role class, name,
parent menu for menu items).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

# role class -> AT-SPI / DOM role names
ROLE_CLASSES = {
    "menu": ("menu", "menu item", "check menu item", "radio menu item", "menuitem", "menuitemcheckbox",
             "menuitemradio"),
    "button": ("push button", "toggle button", "button"),
    "check box": ("check box", "checkbox", "switch"),
    "radio": ("radio button", "radio"),
    "combo box": ("combo box", "combobox"),
    "tab": ("page tab", "tab"),
    "item": ("list item", "table cell", "tree item", "option", "treeitem", "gridcell", "listitem"),
    "field": ("entry", "text", "textbox", "searchbox", "password text", "spin button", "spinbutton"),
    "slider": ("slider",),
}


def role_class(role: str) -> str | None:
    role = (role or "").lower()
    return next((c for c, names in ROLE_CLASSES.items() if role in names), None)


ATSPI_WALKER = r"""
import json, sys
import pyatspi
want = sys.argv[1].lower()
ACT = {"menu", "menu item", "check menu item", "radio menu item", "push button", "toggle button", "check box",
       "radio button", "combo box", "page tab", "list item", "table cell", "tree item", "entry", "text",
       "spin button", "slider", "password text"}
out = []
def walk(acc, menu, depth):
    if depth > 40:
        return
    for i in range(acc.childCount):
        c = acc.getChildAtIndex(i)
        if c is None:
            continue
        role, name = c.getRoleName(), " ".join((c.name or "").split())
        st = c.getState()
        if role in ACT:
            editable = st.contains(pyatspi.STATE_EDITABLE)
            if role != "text" or editable:
                out.append({"role": role, "name": name, "menu": menu,
                            "sensitive": bool(st.contains(pyatspi.STATE_SENSITIVE)),
                            "showing": bool(st.contains(pyatspi.STATE_SHOWING))})
        walk(c, name if role == "menu" or (role == "menu item" and c.childCount) else menu, depth + 1)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and want in (app.name or "").lower():
        walk(app, "", 0)
print(json.dumps(out))
"""

DOM_WALKER = r"""() => {
  const out = [];
  const sel = 'button,input,select,textarea,a[href],[role]';
  for (const el of document.querySelectorAll(sel)) {
    let role = (el.getAttribute('role') || '').toLowerCase();
    const tag = el.tagName.toLowerCase(), type = (el.getAttribute('type') || 'text').toLowerCase();
    if (!role) role = tag === 'button' ? 'button' : tag === 'select' ? 'combobox' : tag === 'textarea' ? 'textbox'
      : tag === 'a' ? 'link' : tag === 'input' ? ({checkbox: 'checkbox', radio: 'radio', range: 'slider',
        number: 'spinbutton'}[type] || 'textbox') : '';
    if (role === 'menu' || role === 'menubar') continue;  // ARIA containers: their menuitems are the controls
    const label = el.closest('label');
    let name = el.getAttribute('aria-label') || (label ? label.textContent : '') || el.textContent || '';
    name = name.replace(/\s+/g, ' ').trim();
    const menu = el.closest('[role=menu]');
    out.push({role, name, menu: menu ? (menu.getAttribute('aria-label') || '') : '',
              sensitive: !el.disabled, showing: !!(el.offsetWidth || el.offsetHeight)});
    if (tag === 'select') for (const o of el.options) out.push({role: 'option', name: o.textContent.trim(),
      menu: name, sensitive: true, showing: false});
  }
  return out;
}"""


def atspi_truth(env_vars: dict[str, str], app: str) -> list[dict[str, Any]]:
    res = subprocess.run(["/usr/bin/python3", "-s", "-c", ATSPI_WALKER, app], env=env_vars, capture_output=True,
                         text=True, timeout=180, check=False)
    if res.returncode != 0:
        raise SystemExit(f"AT-SPI walker failed: {res.stderr[-500:]}")
    return _classify(json.loads(res.stdout))


def dom_truth(url: str) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = b.new_page()
            page.goto(url)
            return _classify(page.evaluate(DOM_WALKER))
        finally:
            b.close()


def _classify(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, seen = [], set()
    for n in nodes:
        cls = role_class(n["role"])
        if cls is None:
            continue
        key = (cls, n["name"], n["menu"] if cls == "menu" else "")
        if key in seen:
            continue
        seen.add(key)
        out.append({**n, "class": cls, "key": list(key)})
    return out
