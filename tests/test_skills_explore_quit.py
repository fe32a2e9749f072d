"""In a sandbox, commands that only close the app (Quit, Close) are explored like any other: the sandbox
is thrown away and the explorer restarts the app. Their skill is verified by the window closing, and its
negative control (the same menu, a click on nothing) keeps the app open. Outside a sandbox the default
profile still denies them."""

from __future__ import annotations

import pytest

from cua.env import make_env
from skills.explorer import ENDS_APP, Budget, Explorer
from skills.graph import UIGraph
from skills.library import SkillLibrary
from skills.profile import load_profile


def test_what_counts_as_only_closing_the_app():
    assert all(ENDS_APP.search(n) for n in ("Quit", "Exit", "Close", "Close Window", "Close Tab", "Quit Mousepad"))
    assert not any(ENDS_APP.search(n) for n in ("Close All Windows Of Others", "Delete", "Closed captions",
                                                 "Print", "Log Out"))


@pytest.fixture(scope="module")
def env():
    e = make_env("sandbox:galculator", sources="a11y")
    yield e
    e.close()


def explore(env, db, disposable: bool):
    lib, graph = SkillLibrary(db), UIGraph(db)
    ex = Explorer(env, lib, graph, load_profile("default"), Budget(max_actions=60, minutes=2, max_depth=2),
                  app="galculator", only="^File$")
    ex.disposable = disposable
    stats = ex.run()
    return lib, graph, stats


def test_quit_is_a_skill_verified_by_the_window_closing(env, tmp_path):
    lib, graph, stats = explore(env, tmp_path / "lib.db", disposable=True)
    try:
        quit_ = lib.get("File › Quit")
        assert quit_ is not None and quit_.status == "verified", stats.notes
        assert quit_.postcondition.describe().startswith("closes the window 'galculator'")
        assert env.observe().elements, "the app was not restarted after its verification"
    finally:
        graph.close()
        lib.close()


def test_outside_a_sandbox_quit_stays_denied(env, tmp_path):
    lib, graph, stats = explore(env, tmp_path / "lib.db", disposable=False)
    try:
        assert lib.get("File › Quit") is None
        denied = graph.db.execute("SELECT COUNT(*) FROM transitions WHERE effect='denied'").fetchone()[0]
        assert denied == 1, stats.notes
    finally:
        graph.close()
        lib.close()
