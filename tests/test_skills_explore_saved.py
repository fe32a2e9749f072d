"""GUI-DFS into a saved file, on featherpad (Qt), default profile plus denials that keep the run short.
File › Save As › Save saves the untitled document; its screen is a mode (the main window, its menus
there) that shows nothing new, but its File menu shows Reload enabled, which the start screen's File
menu showed disabled. Reloading a saved, unchanged file changes nothing; so in that mode the document is
typed into again, though it was typed into at the start, and in that value context (saved, then edited)
File › Reload opens the discard prompt and File › Save All Files clears the modified mark: both become
skills verified by their effect, which a neutral click after the same path does not show."""

from __future__ import annotations

import pytest

from tests.skills_fixtures import exploration, keeping

KEEP = ("file", "save as", "save", "reload", "save all files", "")  # "": the unnamed document
SAVED = "File › Save As › Save"


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    with exploration(tmp_path_factory.mktemp("saved") / "lib.db", "sandbox:featherpad", "featherpad", only="^File$",
                     profile=keeping(*KEEP), max_actions=100000, minutes=6) as run:
        yield run.lib


def test_reload_of_an_unchanged_saved_file_is_no_verified_skill(explored):
    saved = explored.get(SAVED)
    assert saved is not None and saved.status == "verified", [s.name for s in explored.list()]
    alone = explored.get(f"{SAVED} › File › Reload")
    assert alone is None or alone.status != "verified", alone.postcondition.describe()


@pytest.mark.parametrize("item, effect", [("Reload", "window_opened"), ("Save All Files", "text")])
def test_commands_a_saved_file_enables_are_verified_after_an_edit(explored, item, effect):
    skill = explored.get(f"{SAVED} › type document › File › {item}")
    assert skill is not None, [s.name for s in explored.list()]
    assert skill.status == "verified" and skill.verified_runs >= 2, skill.extra.get("status_reason")
    assert any(e.kind == effect and not e.inherited for e in skill.postcondition.effects), \
        skill.postcondition.describe()
