"""GUI-DFS inside a dialog-heavy web app (benchmarks/apps/notes.html in real Chromium), default profile:
check boxes, radio buttons, a field and dialog buttons become skills verified by their effect, then the
dialog is left by reset; a tab or radio already chosen is chosen after a sibling of its group; a toggle
skill is idempotent ("turn on" when on does nothing and succeeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cua.actions import Key
from skills.runner import run_skill
from tests.skills_fixtures import exploration

APP = Path(__file__).resolve().parents[1] / "benchmarks" / "apps" / "notes.html"


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    # --only keeps to the Edit menu (Preferences dialog); the profile is the default one
    with exploration(tmp_path_factory.mktemp("notes") / "lib.db", f"browser:file://{APP}", "notes", only="^Edit$",
                     sources="dom", max_actions=260, minutes=5, max_depth=3) as run:
        yield run.env, run.lib, run.stats


def test_dialog_controls_become_effect_verified_skills(explored):
    _, lib, stats = explored
    assert stats.stopped == "graph fully explored", stats.notes
    skills = {s.name: s for s in lib.list()}
    prefs = skills["Edit › Preferences..."]
    assert prefs.status == "verified" and prefs.postcondition.describe() == "opens the dialog 'Preferences'"
    auto = skills["Edit › Preferences... › Autosave"]
    assert auto.status == "verified" and auto.postcondition.describe() == "turns on Autosave"
    dark = skills["Edit › Preferences... › Dark"]
    assert dark.status == "verified" and "turns on Dark" in dark.postcondition.describe()
    author = skills["Edit › Preferences... › type Author"]
    assert author.status == "verified" and author.postcondition.describe() == "Author changes from (empty) to hello"
    cancel = skills["Edit › Preferences... › Cancel"]
    assert cancel.status == "verified" and cancel.postcondition.describe() == "closes the dialog 'Preferences'"
    clear = skills["Edit › Clear"]  # the status line changes: an effect even though the menu only closes
    assert clear.status == "verified" and "Cleared" in clear.postcondition.describe()
    # 'General' is the tab already selected and 'Light' the radio already chosen: clicking either does
    # nothing of its own, so each is chosen after a sibling of its group, and verified by that
    for name, first, said in (("General", "Advanced", "selects General"), ("Light", "Dark", "turns on Light")):
        again = skills[f"Edit › Preferences... › {name}"]
        assert again.status == "verified", (name, again.extra.get("status_reason"))
        assert [s.action["target"]["text"] for s in again.steps[-2:]] == [first, name]
        assert said in again.postcondition.describe()
    assert not [n for n in stats.notes if "neutral spot" in n and "Autosave" in n]


def test_toggle_skill_is_idempotent(explored):
    env, lib, _ = explored
    auto = lib.get("Edit › Preferences... › Autosave")
    assert auto.steps[-1].unless is not None and auto.steps[-1].unless.after is True
    env.reset()
    first = run_skill(auto, env, library=lib)
    assert first.ok, first.error
    box = next(e for e in first.observation.elements if e.name == "Autosave" and e.role == "check box")
    assert "checked" in box.states
    env.act(Key(key="esc"))  # the dialog closes; the check box keeps its state (the page is not reloaded)
    again = run_skill(auto, env, library=lib)  # already on: the click is skipped, the postcondition holds
    assert again.ok, again.error
    box = next(e for e in again.observation.elements if e.name == "Autosave" and e.role == "check box")
    assert "checked" in box.states


def test_a_check_item_whose_screen_changed_only_in_free_text_is_probed(tmp_path):
    """View › Show Status Bar hides a status line that is plain text: the screen is a new state, yet no
    effect a postcondition can check. The item's own check mark, read by reopening its menu, is."""
    with exploration(tmp_path / "lib.db", f"browser:file://{APP}", "notes", only="^View$", sources="dom",
                     max_actions=120, minutes=4, max_depth=2) as run:
        skill = run.lib.get("View › Show Status Bar")
        assert skill is not None and skill.status == "verified", (skill and skill.extra.get("status_reason"), run.stats.notes)
        assert any(e.kind == "state" and e.state == "checked" and e.after is False and e.reveal
                   for e in skill.postcondition.effects), skill.postcondition.describe()
