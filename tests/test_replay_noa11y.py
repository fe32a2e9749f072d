"""Skills explored with accessibility, replayed with the app's bridge off: each effect read from the app's own store.

Each app is explored on a sandbox with AT-SPI on, then its setting skills are replayed on fresh sandboxes
with the tree and with NO_AT_BRIDGE=1 (no tree: every step found by OCR / the detector). Whether a skill
took effect is read from the app's own settings store (GLib's keyfile for mousepad, galculator.conf),
not from our postcondition; the skills that take effect with the tree are the ones that must without it.
"""

from __future__ import annotations

import pytest

from cua.env import make_env
from noa11y_fixtures import CASES, explore_library, noise_keys, replay_case, setting_skills, settings_store, \
    store_change
from skills.library import SkillLibrary
from skills.runner import run_skill


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    out = {}
    for name, budget in (("mousepad", 45), ("galculator", 40)):
        case = CASES[name]
        out[name] = explore_library(case.with_tree, case.profile, tmp_path_factory.mktemp(name), name, budget)
    return out


@pytest.mark.parametrize("name", ["mousepad", "galculator"])
def test_setting_skills_take_effect_without_accessibility(libraries, name):
    case = CASES[name]
    with SkillLibrary(libraries[name]) as lib:
        skills = setting_skills(lib.list())
    tree = {r["skill"]: r for r in replay_case(case, skills, case.with_tree)}
    settings = [s for s in skills if tree[s.name]["took_effect"]]
    assert len(settings) >= 2, tree
    rows = replay_case(case, settings, case.without_tree)
    for r in rows:
        assert not r["tree"], "the bridge is off: no tree expected"
        assert r["grounding"] and all(g["source"] in ("ocr", "vision", "crop") for g in r["grounding"]), r
        assert all("no accessibility tree" in g["note"] for g in r["grounding"]), r["grounding"]
        assert r["post"] == "visual"
    took = [r for r in rows if r["took_effect"]]
    assert len(took) >= 0.9 * len(settings), [(r["skill"], r["changed"], r["error"]) for r in rows]


def test_stale_and_renamed_accessibility_matches_fall_back_and_say_so(libraries):
    case = CASES["mousepad"]
    with SkillLibrary(libraries["mousepad"]) as lib:
        skill = next(s for s in setting_skills(lib.list()) if s.name.startswith("View › "))
    first = skill.steps[0].action["target"]
    last = skill.steps[-1].action["target"]
    # stale: the window part of the path changed (a new title) and a repeat counter appeared
    stale = skill.model_copy(deep=True)
    stale.steps[0].action["target"]["signature"] = "application:Mousepad/frame:Other title/" + \
        first["signature"].rsplit("/", 1)[-1] + "#2"
    # renamed: the accessible role and name no longer match what is drawn (the visible text is the same)
    renamed = skill.model_copy(deep=True)
    renamed.steps[-1].action["target"] = {"signature": "push button:" + last["text"] + " (renamed)",
                                          "text": last["text"], "role": "push button"}
    with make_env(f"sandbox:{case.with_tree}", sources="a11y") as env:
        home = env.sandbox.home
        noisy = noise_keys(env, home)
        for s, want_via in ((stale, "a11y-tolerant"), (renamed, "text")):
            env.reset()
            before = settings_store(home)
            res = run_skill(s, env)
            g = res.grounding[0] if s is stale else res.grounding[-1]
            assert g["via"] == want_via, res.grounding
            assert "not on screen" in g["note"], g
            if s is renamed:
                assert g["source"] in ("ocr", "vision") and "no push button named" in g["note"], g
            assert {k for k in store_change(home, before) if k not in noisy}, (s.name, res.error)
