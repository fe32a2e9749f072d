"""The action space: every format parses to the same typed actions, bad input never escapes as anything
but ActionParseError, nothing is executed, and serialise -> parse is the identity."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cua.actions import (
    ACTION_KINDS,
    ActionParseError,
    Click,
    Drag,
    Hotkey,
    Key,
    Scroll,
    Target,
    Type,
    action_from_dict,
    normalize_key,
    parse_action,
    parse_actions,
    scale_action,
)

coord = st.integers(min_value=0, max_value=5000)
name = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
keys = st.sampled_from(["enter", "esc", "ctrl", "alt", "shift", "tab", "a", "z", "1", "f5", "pagedown", "up"])
targets = st.builds(
    Target, text=name, role=st.none() | st.sampled_from(["push button", "menu item", "entry"]),
    near=st.none() | name, relation=st.sampled_from(["near", "right_of", "below"]),
    nth=st.none() | st.integers(0, 5),
)


def pointer(kind: str, **extra):
    return st.one_of(
        st.builds(lambda x, y: {"kind": kind, "x": x, "y": y, **extra}, coord, coord),
        st.builds(lambda i: {"kind": kind, "element_id": i, **extra}, st.from_regex(r"e[0-9]{1,4}", fullmatch=True)),
        st.builds(lambda t: {"kind": kind, "target": t.model_dump(exclude_none=True), **extra}, targets),
    )


actions = st.one_of(
    pointer("click"), pointer("click", button="right"), pointer("click", clicks=3), pointer("double_click"),
    pointer("right_click"), pointer("move"),
    st.builds(lambda d, x, y: {**d, "to_x": x, "to_y": y}, pointer("drag"), coord, coord),
    st.builds(lambda d, t: {**d, "to_target": t.model_dump(exclude_none=True)}, pointer("drag"), targets),
    st.builds(lambda dy: {"kind": "scroll", "dy": dy}, st.integers(1, 50)),
    st.builds(lambda d, dx: {**d, "dx": dx}, pointer("scroll", dy=-2), st.integers(-5, 5)),
    st.builds(lambda t: {"kind": "type", "text": t}, st.text(max_size=50)),
    st.builds(lambda k: {"kind": "key", "key": k}, keys),
    st.builds(lambda ks: {"kind": "hotkey", "keys": ks}, st.lists(keys, min_size=1, max_size=4)),
    st.builds(lambda s: {"kind": "wait", "seconds": s}, st.floats(0, 60)),
    st.builds(lambda u: {"kind": "goto", "url": "https://example.test/" + u}, st.text("abc/?=&", max_size=20)),
    st.just({"kind": "back"}), st.builds(lambda m: {"kind": "done", "message": m}, st.none() | name),
    st.builds(lambda r: {"kind": "fail", "reason": r}, st.none() | name),
    st.just({"kind": "mouse_down"}), pointer("mouse_up", button="right"),
)


@given(actions)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_round_trips_are_identities(data):
    a = action_from_dict(data)
    assert action_from_dict(a.to_json()) == a
    assert parse_action(json.dumps(a.to_json())) == a
    assert parse_action(a.to_call()) == a


@contextlib.contextmanager
def no_exec():
    """Any eval/exec or os.system while parsing fails the test."""
    def boom(*a, **k):
        raise AssertionError("parser tried to execute code")
    with mock.patch.object(builtins, "eval", boom), mock.patch.object(builtins, "exec", boom), \
            mock.patch.object(os, "system", boom):
        yield


def _only_parse_errors(value):
    try:
        with no_exec():
            acts = parse_actions(value)
    except ActionParseError as e:
        assert str(e)  # always says what was wrong
        return
    assert acts and all(a.kind in ACTION_KINDS for a in acts)


@given(st.text(max_size=300))
@settings(max_examples=400)
def test_any_text_parses_or_raises_action_parse_error(text):
    _only_parse_errors(text)


call_like = st.builds(
    lambda fn, args: f"{fn}({args})",
    st.sampled_from(["click", "pyautogui.click", "type", "hotkey", "scroll", "drag", "left_double", "finished",
                     "press", "dragTo", "os.system", "__import__", "eval", "open", "wait", "goto"]),
    st.text("xy=0123456789,'\"() _-ab[]{}:.start_boxcontentdirection", max_size=60),
)


@given(call_like)
@settings(max_examples=400)
def test_call_like_strings_never_crash(text):
    _only_parse_errors(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["kind", "action", "action_type", "type", "x", "y", "text", "keys", "key",
                         "coordinate", "parameters", "target", "path", "button", "dy", "input"]), inner, max_size=5),
    max_leaves=20,
)


@given(json_values)
@settings(max_examples=400)
def test_any_json_parses_or_raises_action_parse_error(value):
    _only_parse_errors(value)
    _only_parse_errors(json.dumps(value))


def test_injection_is_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    for code in [f"__import__('os').system('touch {marker}')", f"pyautogui.click(x=open('{marker}','w'), y=1)",
                 f"import os\nos.system('touch {marker}')", f"click(x=(lambda: open('{marker}','w'))(), y=1)"]:
        with pytest.raises(ActionParseError):
            parse_action(code)
    assert not marker.exists()


@pytest.mark.parametrize("value, expected", [
    ('click(x=10, y=20)', Click(x=10, y=20)),
    ('click("File")', Click(target=Target(text="File"))),
    ('click(text="Find", role="push button", near="Search for", relation="right_of")',
     Click(target=Target(text="Find", role="push button", near="Search for", relation="right_of"))),
    ("pyautogui.click(100, 200, button='right')", Click(x=100, y=200, button="right")),
    ("pyautogui.doubleClick(5, 6)", parse_action("double_click(x=5, y=6)")),
    ("pyautogui.typewrite('hi there', interval=0.05)", Type(text="hi there")),
    ("pyautogui.hotkey('ctrl', 'shift', 't')", Hotkey(keys=["ctrl", "shift", "t"])),
    ("pyautogui.press('Return')", Key(key="enter")),
    ("pyautogui.scroll(-3)", Scroll(dy=3)),
    ({"action_type": "CLICK", "parameters": {"x": 3, "y": 4, "button": "left", "num_clicks": 1}}, Click(x=3, y=4)),
    ({"action_type": "TYPING", "parameters": {"text": "abc"}}, Type(text="abc")),
    ({"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}}, Hotkey(keys=["ctrl", "c"])),
    ({"action_type": "SCROLL", "parameters": {"dx": 0, "dy": 2}}, Scroll(dy=-2)),
    ({"action": "left_click", "coordinate": [7, 8]}, Click(x=7, y=8)),
    ({"action": "key", "text": "ctrl+s"}, Hotkey(keys=["ctrl", "s"])),
    ({"action": "type", "text": "x"}, Type(text="x")),
    ({"action": "scroll", "coordinate": [1, 2], "scroll_direction": "up", "scroll_amount": 4}, Scroll(x=1, y=2, dy=-4)),
    ({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40]}, Drag(x=1, y=2, to_x=30, to_y=40)),
    ({"type": "tool_use", "name": "computer", "input": {"action": "triple_click", "coordinate": [5, 5]}},
     Click(x=5, y=5, clicks=3)),
    ({"type": "computer_call", "action": {"type": "click", "button": "left", "x": 9, "y": 9}}, Click(x=9, y=9)),
    ({"type": "keypress", "keys": ["CTRL", "A"]}, Hotkey(keys=["ctrl", "a"])),
    ({"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 5, "y": 5}, {"x": 9, "y": 9}]}, Drag(x=1, y=1, to_x=9, to_y=9)),
    ({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": -250}, Scroll(x=1, y=1, dy=-2)),
    ("click(start_box='(100,200)')", Click(x=100, y=200)),
    ("left_double(start_box='<|box_start|>(10,10,30,50)<|box_end|>')", parse_action("double_click(x=20, y=30)")),
    ("Thought: open it\nAction: right_single(start_box='(4,5)')", parse_action("right_click(x=4, y=5)")),
    ("type(content='hello world')", Type(text="hello world")),
    ("hotkey(key='ctrl c')", Hotkey(keys=["ctrl", "c"])),
    ("scroll(start_box='(50,60)', direction='up')", Scroll(x=50, y=60, dy=-5)),
    ("drag(start_box='(1,2)', end_box='(3,4)')", Drag(x=1, y=2, to_x=3, to_y=4)),
    ("finished(content='all done')", parse_action({"kind": "done", "message": "all done"})),
])
def test_formats(value, expected):
    assert parse_action(value) == expected


def test_multi_action_inputs():
    acts = parse_actions("import pyautogui\npyautogui.moveTo(10, 10)\npyautogui.dragTo(50, 60, duration=0.5)")
    assert [a.kind for a in acts] == ["move", "mouse_down", "move", "mouse_up"]
    assert acts[2].point == (50, 60)
    assert [a.kind for a in parse_actions({"action_type": "DRAG_TO", "parameters": {"x": 1, "y": 2}})] == \
        ["mouse_down", "move", "mouse_up"]
    with pytest.raises(ActionParseError, match="expected one action"):
        parse_action("pyautogui.press('a', presses=2)")


@pytest.mark.parametrize("bad, words", [
    ("click(x=1)", "both x and y"),
    ("click(x=1, y=2, element_id='e1')", "exactly one"),
    ("zap(1)", "unknown action 'zap'"),
    ('{"kind": "zap"}', "unknown action kind"),
    ('{"kind": "click"', "invalid JSON"),
    ("hotkey('ctrl', 'banana')", "unknown key 'banana'"),
    ("goto('javascript:alert(1)')", "must start with http"),
    ("scroll(dy=0)", "non-zero"),
    ({"action_type": "KEY_DOWN", "parameters": {"key": "a"}}, "KEY_DOWN"),
    ({"action": "left_click", "coordinate": [1]}, "coordinate must be"),
    ({"foo": 1}, "unrecognised action object"),
    (42, "JSON object or a string"),
    ("click(x=1, y=2, speed=3)", "unknown argument"),
])
def test_bad_input_names_the_problem(bad, words):
    with pytest.raises(ActionParseError, match=words.replace("(", r"\(")):
        parse_action(bad)


def test_key_normalisation():
    assert normalize_key("Return") == "enter"
    assert normalize_key("Control_L") == "ctrl"
    assert normalize_key("ArrowUp") == "up"
    assert normalize_key("A") == "A"
    assert Hotkey(keys=["Ctrl", "S"]).keys == ["ctrl", "s"]


@given(coord, coord, st.integers(100, 4000), st.integers(100, 4000))
def test_scaling_both_ways(x, y, w, h):
    model, screen = (1000, 1000), (w, h)
    a = Click(x=min(x, 999), y=min(y, 999))
    s = scale_action(a, model, screen)
    assert 0 <= s.x < w and 0 <= s.y < h
    back = scale_action(s, screen, model)
    assert abs(back.x - a.x) <= 1000 / w + 1 and abs(back.y - a.y) <= 1000 / h + 1
    assert scale_action(Type(text="x"), model, screen) == Type(text="x")
