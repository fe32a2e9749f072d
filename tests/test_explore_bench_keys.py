"""How explore_bench credits a skill to a ground-truth control: an unnamed control by its role class
and its (empty) name, not by the word its UI path calls it by."""

from __future__ import annotations

from types import SimpleNamespace

from benchmarks.explore_bench import covered, skill_keys


def _skill(name: str, role: str, target: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, extra={"ui_path": name.split(" › "), "role": role, "target": target})


def test_an_unnamed_document_is_the_unnamed_field_of_the_truth():
    typed = _skill("type document", "text", "application:mousepad/frame:/page tab list:/text:")
    assert skill_keys(typed) == {("field", "", "")}
    truth = [{"key": ["field", "", ""]}, {"key": ["menu", "Cut", "Edit"]}]
    assert covered(truth, skill_keys(typed))["covered"] == 1


def test_a_named_control_keeps_its_name_and_menu():
    cut = _skill("Edit › Cut", "menu item", "application:mousepad/frame:/menu bar:/menu:Edit/menu item:Cut")
    assert skill_keys(cut) == {("menu", "Cut", "Edit")}
    box = _skill("Find › check box", "check box", "application:featherpad/frame:Untitled/check box:#2")
    assert skill_keys(box) == {("check box", "", "")}
    called = _skill("type Search", "text", "application:app/frame:/text:Search")
    assert skill_keys(called) == {("field", "Search", "")}
