"""Composites from dialogs (skills.curriculum): a text field or a spin button, and a button that is not
Close/Cancel. A spin button is a number's field ("Go to › Line number: {number} › Jump to"): typed with a
number every document has, its parameter an int that a request's number binds to."""

from skills.curriculum import NUMBER_SAMPLE, compose, dialog_parts
from skills.intent import bind_values, clause
from skills.skill import Skill

D = "application:mousepad/dialog:Go To"


def _el(role: str, name: str, x: int) -> dict:
    return {"id": f"{role}{x}", "role": role, "name": name, "bbox": [x, 100, 80, 24], "source": "a11y",
            "states": ["showing", "visible", "enabled"], "path": ["application:mousepad", "dialog:Go To"]}


def test_a_spin_button_is_a_number_field_not_a_button():
    state = {"elements": [_el("label", "Line number:", 10), _el("spin button", "", 100),
                          _el("push button", "Cancel", 200), _el("push button", "Jump to", 300)]}
    fields, buttons, every = dialog_parts(state)
    assert [f.role for f in fields] == ["spin button"] and [b.name for b in buttons] == ["Jump to"]
    unit = Skill(name="Search › Go to...", app="mousepad", extra={"ui_path": ["Search", "Go to..."]})
    comp = compose(unit, fields[0], buttons[0], NUMBER_SAMPLE, "Line number")
    assert comp.name == "Search › Go to... › Line number: {number} › Jump to"
    assert [(p.name, p.type, p.default) for p in comp.parameters] == [("number", "int", 1)]
    assert comp.steps[3].action == {"kind": "type", "text": "{number}"}
    assert bind_values(comp, clause("take me to line 57")) == {"number": 57}


def test_a_text_field_keeps_its_text_parameter():
    state = {"elements": [_el("text", "", 100) | {"states": ["showing", "visible", "enabled", "editable"]},
                          _el("push button", "Find", 300)]}
    fields, buttons, _ = dialog_parts(state)
    comp = compose(Skill(name="Search › Find", app="m", extra={"ui_path": ["Search", "Find"]}), fields[0], buttons[0],
                   "hello")
    assert [(p.name, p.type, p.default) for p in comp.parameters] == [("text", "str", "hello")]
    assert comp.name == "Search › Find › the text field: {text} › Find"
