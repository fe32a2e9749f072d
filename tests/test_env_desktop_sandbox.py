"""SandboxEnv on a real Xvfb + openbox + mousepad, with real AT-SPI: observe, act, reset, element_at."""

from __future__ import annotations

import time

import pytest

from cua.actions import action_from_dict
from cua.env.desktop import SandboxEnv
from cua.eval.checkers import CheckContext, evaluate

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def env():
    e = SandboxEnv("mousepad", sources="a11y")
    try:
        yield e
    finally:
        e.close()


def act(env, **data):
    return env.act(action_from_dict(data))


def by_name(obs, role, name):
    return [e for e in obs.elements if e.role == role and e.name == name]


def eventually(env, check, timeout: float = 10.0):
    """Observe until check(obs) is truthy (bounded): effects may land after a loaded machine settles."""
    deadline = time.monotonic() + timeout
    while True:
        obs = env.observe()
        got = check(obs)
        if got or time.monotonic() > deadline:
            return got


def menu_items(obs):
    return [e.name for e in obs.elements if e.role == "menu item"]


def text_value(env) -> str | None:
    vals = [e.value for e in env.observe().elements if e.role == "text" and "editable" in e.states]
    return vals[0] if vals else None


def test_observe_lists_menus_with_a11y_boxes(env):
    obs = env.observe()
    assert obs.size == (1280, 800) and obs.image().size == (1280, 800)
    assert "Mousepad" in obs.window_title and obs.app == "mousepad"
    for menu in ("File", "Edit", "Search"):
        [el] = by_name(obs, "menu", menu)
        _, y, w, h = el.bbox
        assert el.source == "a11y" and w > 10 and h > 10 and 0 <= y < 100
        assert el.signature.endswith(f"menu bar:/menu:{menu}") and "Untitled" not in el.signature
    assert len({e.id for e in obs.elements}) == len(obs.elements)
    assert {"capture", "a11y", "total"} <= set(obs.timings)


def test_click_search_menu_opens_it_and_esc_closes(env):
    obs = env.observe()
    assert not [e for e in obs.elements if e.role == "menu item"]
    [search] = by_name(obs, "menu", "Search")
    r = env.act(action_from_dict({"kind": "click", "element_id": search.id}))
    assert r.ok and r.changed and r.point == search.center
    items = eventually(env, menu_items)
    assert "Find" in items and "Go to..." in items
    r = act(env, kind="key", key="esc")
    assert r.ok and r.changed
    assert eventually(env, lambda o: not menu_items(o))


def test_type_unicode_then_hotkey_select_all_and_delete(env):
    text = "Hello wörld ✓ 日本 😀 Ωμέγα\nline2 ABC!@# ~`|\\ {}\tend"
    r = act(env, kind="type", text=text)
    assert r.ok and r.settled
    assert eventually(env, lambda o: text_value(env) == text)
    assert act(env, kind="hotkey", keys=["ctrl", "a"]).ok
    assert act(env, kind="key", key="backspace").changed
    assert eventually(env, lambda o: text_value(env) == "")


def test_drag_selects_text_and_typing_replaces_it(env):
    act(env, kind="type", text="alpha beta")
    assert eventually(env, lambda o: text_value(env) == "alpha beta")
    [field] = [e for e in env.observe().elements if e.role == "text" and "editable" in e.states]
    x, y, _, _ = field.bbox
    # drag from the far right of line 1 back to its start selects the whole line
    r = act(env, kind="drag", x=x + 400, y=y + 8, to_x=x + 1, to_y=y + 8)
    assert r.ok and r.changed
    act(env, kind="type", text="Z")
    assert eventually(env, lambda o: text_value(env) == "Z")
    act(env, kind="hotkey", keys=["ctrl", "a"])
    act(env, kind="key", key="delete")
    assert eventually(env, lambda o: text_value(env) == "")


def test_double_click_selects_a_word(env):
    act(env, kind="type", text="one two three")
    assert eventually(env, lambda o: text_value(env) == "one two three")
    [field] = [e for e in env.observe().elements if e.role == "text" and "editable" in e.states]
    x, y = field.bbox[0] + 3, field.bbox[1] + 8  # on the word "one"
    assert act(env, kind="double_click", x=x, y=y).ok
    act(env, kind="type", text="1")
    assert eventually(env, lambda o: text_value(env) == "1 two three")
    act(env, kind="hotkey", keys=["ctrl", "a"])
    act(env, kind="key", key="delete")
    assert eventually(env, lambda o: text_value(env) == "")


def test_element_at_and_focused(env):
    obs = env.observe()
    [edit] = by_name(obs, "menu", "Edit")
    hit = env.element_at(*edit.center)
    assert hit is not None and hit.name == "Edit" and hit.role == "menu"
    focused = env.focused_element()
    assert focused is not None and focused.role == "text"
    assert env.element_at(5000, 5000) is None


def test_bad_actions_give_clear_errors(env):
    r = act(env, kind="click", x=5000, y=10)
    assert not r.ok and "off screen" in r.error and "1280x800" in r.error
    r = act(env, kind="click", element_id="e999")
    assert not r.ok and "e999" in r.error
    r = act(env, kind="goto", url="https://example.com")
    assert not r.ok and "browser" in r.error
    assert act(env, kind="done").ok
    r = act(env, kind="wait", seconds=0.2)
    assert r.ok and r.timings["total"] < 5


def test_scroll_and_right_click_run(env):
    lines = "\n".join(f"line {i}" for i in range(80))
    act(env, kind="type", text=lines)
    assert eventually(env, lambda o: text_value(env) == lines)
    top = env.observe().image_hash()
    assert act(env, kind="scroll", x=600, y=400, dy=-10).ok  # back to the top
    assert eventually(env, lambda o: o.image_hash() != top)
    r = act(env, kind="right_click", x=600, y=300)
    assert r.ok
    assert eventually(env, menu_items)  # the context menu
    act(env, kind="key", key="esc")
    assert eventually(env, lambda o: not menu_items(o))


def test_a_modal_dialog_hides_the_window_it_blocks(env):
    assert act(env, kind="hotkey", keys=["ctrl", "o"]).ok  # the modal Open File chooser
    obs = eventually(env, lambda o: o if o.window_title == "Open File" else None)
    assert obs is not None
    roles = {e.role for e in obs.elements}
    assert "file chooser" in roles and "push button" in roles
    assert not [e for e in obs.elements if e.role == "menu" and e.name == "Search"]  # the frame takes no input
    # ... but it is still the app's state: a checker reads it behind the dialog ("the menu bar is shown")
    assert [e for e in env.state_elements() if e.role == "menu" and e.name == "Search"]
    ctx = CheckContext(env=env, home=None, proc_env=None)
    assert evaluate({"all": [{"type": "a11y_exists", "role": "menu", "name": "Search", "exact": True},
                             {"type": "a11y_exists", "role": "file chooser"}]}, ctx)
    act(env, kind="key", key="esc")
    assert eventually(env, lambda o: by_name(o, "menu", "Search"))


def test_reset_gives_a_clean_app_with_stable_signatures(env):
    before = {e.signature for e in env.observe().elements if e.role == "menu"}
    act(env, kind="type", text="dirty")
    assert eventually(env, lambda o: "dirty" in (text_value(env) or ""))
    dirty = env.observe()
    assert dirty.window_title.startswith("*")  # the title changed, the signatures did not
    assert {e.signature for e in dirty.elements if e.role == "menu"} == before
    menu = next(e for e in dirty.elements if e.role == "menu")
    env.x.move(*menu.center)  # the pointer left over a control: the new window would show its tooltip
    obs = env.reset()
    assert env.x.pointer() == (env.sandbox.size[0] - 1, env.sandbox.size[1] - 1)  # parked in the corner
    assert {e.signature for e in obs.elements if e.role == "menu"} == before
    assert text_value(env) == ""
    assert "Mousepad" in obs.window_title and not obs.window_title.startswith("*")
