"""OSWorld's accessibility-tree getter on a real sandbox: the whole AT-SPI hierarchy as its VM server writes it.

OSWorld's tasks select nodes with CSS selectors and XPath that walk the hierarchy (`menu-bar > menu`),
read `st:` states, `attr:` object attributes and text; a flat list of visible elements answers none of
them. Each rule here is scored by `check_accessibility_tree`, OSWorld's metric, as its tasks score them.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pytest

from cua.actions import action_from_dict
from cua.eval.osworld.a11y_xml import NS, osworld_xml
from cua.eval.osworld.evaluate import score
from cua.eval.osworld.getters import GETTERS
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.spec import parse_task


def tree_task(*rules: dict) -> dict:
    return {"id": "a11y", "snapshot": "os", "instruction": "Type hello world.", "config": [],
            "related_apps": ["os"],
            "evaluator": {"func": "check_accessibility_tree", "result": {"type": "accessibility_tree"},
                          "expected": {"type": "rule", "rules": list(rules)}}}


HIERARCHY = {"selectors": ['application[name=mousepad] menu-bar > menu[name=File] > menu-item[name^="Open"]']}
ATTRIBUTES = {"selectors": ["frame[attr|window-type=normal][st|active=true]"]}
TEXT = {"xpath": '//application[@name="mousepad"]//text[@st:focused="true"]', "text": "hello world", "exact": True}


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    from cua.env import make_env

    with make_env("sandbox:mousepad") as env:
        env.act(action_from_dict({"kind": "type", "text": "hello world"}))
        rt = Runtime(env, tmp_path_factory.mktemp("assets"))
        try:
            yield rt
        finally:
            rt.close()


def test_the_tree_is_the_whole_hierarchy(typed):
    root = ET.fromstring(GETTERS["accessibility_tree"](typed))
    assert root.tag == "desktop-frame"
    app = next(a for a in root.iter("application") if a.get("name") == "mousepad")
    file_menu = next(m for m in app.iter("menu") if m.get("name") == "File")
    # hidden nodes are walked too (a closed menu's items), and only showing ones have a position
    items = list(file_menu.iter("menu-item"))
    assert items and all(f"{{{NS['st']}}}showing" not in i.attrib for i in items)
    assert all(f"{{{NS['cp']}}}screencoord" not in i.attrib for i in items)
    assert file_menu.get(f"{{{NS['cp']}}}screencoord") and file_menu.get(f"{{{NS['attr']}}}toolkit") == "gtk"
    assert any(k.startswith(f"{{{NS['act']}}}") for k in file_menu.attrib)


def test_osworld_rules_score_on_the_tree(typed):
    task = parse_task(tree_task(HIERARCHY, ATTRIBUTES, TEXT), "x/os/a11y.json")
    details: list[str] = []
    assert score(task, typed, declared_infeasible=False, details=details) == 1.0, details


@pytest.mark.parametrize("rule", [
    {**TEXT, "text": "goodbye"},
    {"selectors": ["application[name=mousepad] menu-bar > menu[name=Nonexistent]"]},
    {"selectors": ['application[name=mousepad] menu-bar > menu-item[name^="Open"]']},  # not a direct child
])
def test_a_rule_the_screen_does_not_meet_scores_zero(typed, rule):
    task = parse_task(tree_task(HIERARCHY, rule), "x/os/a11y.json")
    assert score(task, typed, declared_infeasible=False) == 0.0


def test_xml_carries_states_values_and_actions_as_the_server_does():
    reply = {"tree": [{"role": "application", "name": "calc", "states": [], "children": [
        {"role": "spin button", "name": "Size", "states": ["showing", "visible", "multi_line"],
         "attributes": {"id": "size", "bad name": "x"}, "bbox": [10, 20, 30, 40], "text": "12\x01",
         "value": {"value": "12.0", "min": "1.0"}, "actions": [["activate", "Activates", "<Alt>s"]],
         "image": False, "selection": True, "children": []}]}]}
    node = ET.fromstring(osworld_xml(reply)).find("application/spin-button")
    assert node is not None and node.get("name") == "Size" and node.text == "12"
    st, attr, cp, val, act = (f"{{{NS[k]}}}" for k in ("st", "attr", "cp", "val", "act"))
    assert node.get(st + "multi_line") == "true" and node.get(attr + "id") == "size"
    assert node.get(cp + "screencoord") == "(10, 20)" and node.get(cp + "size") == "(30, 40)"
    assert node.get(val + "value") == "12.0" and node.get(act + "activate_kb") == "<Alt>s"
    assert node.get("selection") == "true" and node.get("image") is None
