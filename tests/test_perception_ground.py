"""Grounding a Target: signature, exact and fuzzy text, roles with synonyms, relations, ambiguity."""

from __future__ import annotations

import pytest

from cua.actions import Target
from cua.perception.elements import Observation
from cua.perception.ground import GroundingError, ground, role_matches
from cua.perception.merge import assign_ids
from tests.perception_fixtures import el


@pytest.fixture
def obs() -> Observation:
    els = [
        el("menu", "File", (10, 5, 40, 20), path=["frame:Editor", "menu bar:"]),
        el("text", "File", (12, 8, 30, 14), source="ocr"),  # the same word seen by OCR
        el("label", "Name", (20, 100, 50, 20)),
        el("entry", "", (90, 98, 200, 24)),
        el("label", "Password", (20, 140, 70, 20)),
        el("password text", "", (100, 138, 190, 24)),
        el("push button", "OK", (100, 200, 60, 26)),
        el("push button", "OK", (300, 200, 60, 26)),
        el("push button", "Cancel", (400, 200, 70, 26)),
        el("text", "Find and Replace", (500, 300, 120, 16), source="ocr",
           attrs={"words": [["Find", 500, 300, 30, 16], ["and", 535, 300, 25, 16], ["Replace", 565, 300, 55, 16]]}),
        el("check menu item", "Highlight All", (500, 340, 150, 22)),
        el("toggle button", "Bold", (700, 10, 30, 30)),
    ]
    return Observation(elements=assign_ids(els), size=(1280, 800))


def test_exact_text_prefers_structured_over_ocr_for_the_same_place(obs):
    g = ground(Target(text="File"), obs)
    assert g.element.source == "a11y" and g.element.role == "menu" and g.point == (30, 15)


def test_signature_first_and_falls_back_to_its_name_when_the_path_changed(obs):
    sig = "frame:Editor/menu bar:/menu:File"
    assert ground(Target(signature=sig), obs).element.signature == sig
    moved = ground(Target(signature="frame:*Editor (modified)/menu bar:/menu:File"), obs)
    assert moved.element.name == "File" and moved.element.source == "a11y"
    with pytest.raises(GroundingError, match="Nope"):
        ground(Target(signature="frame:Editor/push button:Nope"), obs)


def test_fuzzy_and_case_insensitive_text(obs):
    assert ground(Target(text="cancel"), obs).element.name == "Cancel"
    assert ground(Target(text="Cancle"), obs).element.name == "Cancel"
    assert ground(Target(text="Highlight all"), obs).element.role == "check menu item"
    with pytest.raises(GroundingError, match="closest names: 'Cancel'"):
        ground(Target(text="Cancellation policy xyz"), obs)


def test_a_word_inside_an_ocr_line_gets_the_word_point(obs):
    g = ground(Target(text="Replace"), obs)
    assert g.element.name == "Find and Replace" and g.point == (592, 308)


def test_role_filter_uses_synonyms(obs):
    assert role_matches("button", "push button") and role_matches("button", "toggle button")
    assert role_matches("field", "entry") and role_matches("field", "password text")
    assert role_matches("menu item", "check menu item") and not role_matches("button", "entry")
    assert ground(Target(text="Bold", role="button"), obs).element.role == "toggle button"
    assert ground(Target(text="Highlight All", role="menu item"), obs).element.name == "Highlight All"
    with pytest.raises(GroundingError, match="nothing on screen matches"):
        ground(Target(text="Cancel", role="menu item"), obs)


def test_spatial_relations_pick_the_field_next_to_or_below_a_label(obs):
    name_field = ground(Target(role="field", near="Name", relation="right_of"), obs)
    assert name_field.element.bbox == (90, 98, 200, 24)
    pw = ground(Target(role="field", near="Password", relation="right_of"), obs)
    assert pw.element.role == "password text"
    below = ground(Target(role="field", near="Name", relation="below"), obs)
    assert below.element.role == "password text"
    right_ok = ground(Target(text="OK", near="Cancel", relation="left_of"), obs)
    assert right_ok.element.bbox[0] == 300


def test_ambiguity_lists_the_candidates_and_nth_chooses(obs):
    with pytest.raises(GroundingError) as err:
        ground(Target(text="OK"), obs)
    msg = str(err.value)
    assert "2 elements match" in msg and "(100, 200, 60, 26)" in msg and "(300, 200, 60, 26)" in msg and "nth=" in msg
    assert ground(Target(text="OK", nth=1), obs).element.bbox[0] == 300
    with pytest.raises(GroundingError, match="only 2 match"):
        ground(Target(text="OK", nth=5), obs)


def test_invisible_elements_are_not_grounded():
    o = Observation(elements=assign_ids([el("push button", "Hidden", (10, 10, 0, 0)),
                                         el("push button", "Off", (5000, 10, 20, 20))]), size=(1280, 800))
    for t in ("Hidden", "Off"):
        with pytest.raises(GroundingError):
            ground(Target(text=t), o)


def test_parse_point_reads_common_grounding_replies():
    from cua.perception.ground import parse_point

    assert parse_point("click(start_box='(412,88)')") == (412, 88)
    assert parse_point("<|box_start|>(100,200),(140,220)<|box_end|>") == (120, 210)
    assert parse_point("<point>10 20</point>") == (10, 20)
    assert parse_point('{"x": 5, "y": 7}') == (5, 7)
    assert parse_point("The element is at [300, 400].") == (300, 400)
    with pytest.raises(ValueError, match="no point in the grounding model's reply"):
        parse_point("I cannot see it")


def test_model_grounder_over_a_fake_openai_endpoint(obs):
    from PIL import Image

    from cua.models.fake_server import FakeServer
    from cua.models.openai_client import OpenAIModel
    from cua.perception.ground import ModelGrounder

    shot = obs.model_copy(update={"screenshot": Image.new("RGB", (1280, 800), "white")})
    script = ["click(start_box='(340,266)')", "(0.1, 0.5)", "no idea", "(2000, 10)"]
    with FakeServer(script) as srv:
        model = OpenAIModel("ui-tars", base_url=srv.base_url, api_key="x", max_image_size=(640, 400), retries=0)
        g = ModelGrounder(model, coords="norm1000").ground(Target(text="the cancel button"), shot)
        assert g.point == (435, 213) and g.element.name == "Cancel"
        assert ModelGrounder(model, coords="norm1").point(Target(text="x"), shot) == (128, 400)
        with pytest.raises(GroundingError, match="no point"):
            ModelGrounder(model).point(Target(text="y"), shot)
        with pytest.raises(GroundingError, match="off the 1280x800 screen"):
            ModelGrounder(model).point(Target(text="z"), shot)
        sent = srv.state.requests[0]
        content = sent["messages"][-1]["content"]
        assert any(c.get("type") == "image_url" for c in content) and "cancel button" in content[0]["text"]
    with pytest.raises(ValueError, match="coords must be"):
        ModelGrounder(model, coords="inches")


def test_a_label_read_as_two_ocr_phrases_is_found_by_joining_them():
    els = assign_ids([el("text", "Click", (100, 50, 40, 16), source="ocr"), el("text", "Me!", (152, 50, 28, 16), source="ocr"),
                      el("text", "Me!", (152, 300, 28, 16), source="ocr")])
    g = ground(Target(text="Click Me!"), Observation(elements=els, size=(1280, 800)))
    assert g.point == (140, 58) and g.element.attrs["joined"] == 2


def test_wrapped_label_and_word_glued_by_punctuation():
    els = assign_ids([el("text", "Click", (100, 50, 40, 16), source="ocr"), el("text", "Me!", (104, 68, 28, 16), source="ocr"),
                      el("text", "scelerisque.Duis quisque", (10, 200, 240, 16), source="ocr",
                         attrs={"words": [["scelerisque.Duis", 10, 200, 160, 16], ["quisque", 180, 200, 70, 16]]})])
    o = Observation(elements=els, size=(1280, 800))
    assert ground(Target(text="Click Me!"), o).element.attrs["joined"] == 2
    g = ground(Target(text="Duis"), o)  # 'Duis' is the last 4 of 16 characters of the first word
    assert g.point == (150, 208)


def test_a_word_glued_to_its_neighbours_by_ocr_gets_a_point_inside_the_line():
    line = el("text", "namscelerisquesitnunc", (10, 100, 210, 14), source="ocr",
              attrs={"words": [["namscelerisquesitnunc", 10, 100, 210, 14]]})
    g = ground(Target(text="sit"), Observation(elements=assign_ids([line]), size=(1280, 800)))
    assert g.point == (165, 107)  # characters 14..17 of 21 (x 150..180), not the line centre (115)


def test_same_word_in_two_lines_prefers_the_exact_case():
    els = assign_ids([el("text", "duis sit magna", (10, 100, 140, 14), source="ocr"),
                      el("text", "scelerisque. Duis quisque", (10, 120, 250, 14), source="ocr")])
    o = Observation(elements=els, size=(1280, 800))
    assert ground(Target(text="Duis"), o).element.name.startswith("scelerisque")
    with pytest.raises(GroundingError, match="equally well"):
        ground(Target(text="DUIS"), o)
