"""GUI-DFS across a mode, default profile plus denials that keep the run short: galculator's number bases
are disabled in its basic mode. View › Scientific Mode changes the main window in place (no window opens,
the menus stay), so its screen is a mode, where the start screen's menus are opened again and what was
never tried there (shown disabled) is tried: Calculator › Number bases › Binary becomes a skill verified
by its effect (the item is now on), and what was tried before is not redone."""

from __future__ import annotations

import json

import pytest

from tests.skills_fixtures import exploration, keeping

KEEP = ("view", "calculator", "scientific mode", "number bases", "binary", "octal", "basic mode")


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    # everything but these few names is denied: the scientific keypad is big
    with exploration(tmp_path_factory.mktemp("mode") / "lib.db", "sandbox:galculator", "galculator",
                     only="^(View|Calculator)$", profile=keeping(*KEEP), max_actions=100000, minutes=6) as run:
        yield run.lib, run.graph, run.stats


def test_a_control_disabled_at_the_start_is_verified_in_a_mode(explored):
    lib, _, stats = explored
    assert lib.get("Calculator › Number bases") is None  # disabled in basic mode: never tried there
    binary = lib.get("View › Scientific Mode › Calculator › Number bases › Binary")
    assert binary is not None, [s.name for s in lib.list()]
    assert binary.status == "verified" and binary.verified_runs >= 2, binary.extra.get("status_reason")
    assert "turns on Binary" in binary.postcondition.describe()


def test_the_mode_opens_the_menus_again_without_redoing_them(explored):
    lib, graph, _ = explored
    mode = lib.get("View › Scientific Mode")
    assert mode is not None and mode.status == "verified"
    assert lib.get("View › Scientific Mode › Calculator") is None  # a menu opened in a mode is no new skill
    assert lib.get("View › Scientific Mode › View › Scientific Mode") is None  # tried before: not redone
    modes = [names for names, prefix in graph.db.execute("SELECT path_names, prefix FROM states")
             if json.loads(prefix) and json.loads(prefix)[-1].get("context") == "mode"]
    assert [json.loads(m) for m in modes] == [["View", "Scientific Mode"]]
