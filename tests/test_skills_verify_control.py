"""The negative control's runs: how many, and how long each looks for the postcondition.

The env and the runs are stand-ins here (the replays' outcomes are scripted); the real runs are checked
end to end by the explorer tests on Chromium, GTK and Qt apps.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import skills.verify as verify
from cua.perception.elements import Observation, UIElement
from skills.candidates import neutral_point
from skills.effects import Effect, revealed_problems
from skills.library import SkillLibrary
from skills.runner import POST_TIMEOUT, SkillRunResult, condition_problems
from skills.skill import Condition, Skill, SkillStep


class FakeExplorer:
    """What verification needs of an explorer: reset, a library, notes and an observation."""

    def __init__(self, lib: SkillLibrary) -> None:
        self.lib, self.env, self._obs, self.verify_runs = lib, object(), None, 2
        self.resets, self.notes = 0, []
        self.volatile, self.volatile_slots = set(), set()
        self.graph = SimpleNamespace(state=lambda key: None)

    def reset(self) -> None:
        self.resets += 1

    def observe(self) -> None:
        return None

    def learn_volatile(self, a, b) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)

    def check_budget_time(self) -> None:
        pass


def _skill(lib: SkillLibrary, neutral: list[int] | None) -> Skill:
    steps = [SkillStep(action={"kind": "click", "target": {"signature": s}}) for s in ("menu:View", "check:Wrap")]
    effect = Effect(kind="state", signature="check:Wrap", state="checked", before=False, after=True, name="Wrap")
    return lib.add(Skill(name="View › Wrap", app="demo", steps=steps, postcondition=Condition(effects=[effect]),
                         provenance="explored", extra={"own_steps": 1, "neutral": neutral}))


@pytest.fixture
def runs(monkeypatch, tmp_path):
    """Scripted runs: `script` maps a run (the skill's own, or its control) to its outcome; each call is
    logged with its step count and the time it may wait for the postcondition."""
    lib = SkillLibrary(tmp_path / "lib.db")
    log: list[tuple[str, int, float]] = []
    script = {"own": SkillRunResult(ok=True, post_wait=0.0), "control": SkillRunResult(ok=False)}

    def run_skill(skill, env, library=None, obs=None, post_timeout=POST_TIMEOUT, **_):
        kind = "control" if skill.name.endswith("(negative control)") else "own"
        log.append((kind, len(skill.steps), post_timeout))
        return script[kind]

    monkeypatch.setattr(verify, "run_skill", run_skill)
    monkeypatch.setattr(verify, "neutral_point", lambda obs: None)
    return FakeExplorer(lib), lib, log, script


def test_without_a_neutral_spot_the_control_is_one_run_without_the_final_action(runs):
    ex, lib, log, _ = runs
    _skill(lib, neutral=None)
    assert verify.verify_skill(ex, "View › Wrap") == "verified"
    controls = [entry for entry in log if entry[0] == "control"]
    assert controls == [("control", 1, verify.CONTROL_WAIT)]  # the menu opened, the item not clicked, once
    assert ex.resets == 3  # two replays and one control, each from a fresh start


def test_a_postcondition_that_holds_without_the_final_action_is_unverified(runs):
    ex, lib, _, script = runs
    _skill(lib, neutral=None)
    script["control"] = SkillRunResult(ok=True)
    assert verify.verify_skill(ex, "View › Wrap") == "unverified"
    assert lib.get("View › Wrap").extra["status_reason"] == "its postcondition already holds before the final action"


def test_a_slow_effect_gets_a_longer_look_in_its_control(runs):
    """The control looks as long as the replays needed to see the effect, with a margin, never beyond
    the replays' own bound."""
    ex, lib, log, script = runs
    _skill(lib, neutral=[5, 5])
    script["own"] = SkillRunResult(ok=True, post_wait=1.2)
    assert verify.verify_skill(ex, "View › Wrap") == "verified"
    wait = next(w for kind, _, w in log if kind == "control")
    assert wait == pytest.approx(verify.CONTROL_WAIT + 2 * 1.2)
    assert [n for kind, n, _ in log if kind == "control"] == [2]  # the final click moved to the neutral spot
    script["own"] = SkillRunResult(ok=True, post_wait=3.0)
    log.clear()
    _skill(lib, neutral=[5, 5])
    verify.verify_skill(ex, "View › Wrap")
    assert next(w for kind, _, w in log if kind == "control") == POST_TIMEOUT


# -- sibling skills whose effect hides in a closed menu (a language's check mark) ----------------------

def _el(role: str, name: str, bbox: tuple[int, int, int, int], states: tuple[str, ...] = ()) -> UIElement:
    return UIElement(id=name or role, role=role, name=name, bbox=bbox, source="a11y",
                     states=["showing", "visible", "enabled", *states], path=["frame:Editor"])


class MenuEnv:
    """A frame whose 'Markup' menu opens on a click and lists two languages, `checked` marked;
    logs every click and key."""

    def __init__(self, checked: set[str]) -> None:
        self.checked, self.open, self.log = checked, False, []

    def observe(self) -> Observation:
        els = [_el("frame", "Editor", (0, 0, 400, 300)), _el("menu", "Markup", (0, 20, 60, 20))]
        if self.open:
            els += [_el("check menu item", n, (0, 40 + 20 * i, 120, 20), ("checked",) if n in self.checked else ())
                    for i, n in enumerate(("AsciiDoc", "BibTeX"))]
        return Observation(elements=els, size=(400, 300))

    def act(self, action) -> SimpleNamespace:
        self.log.append(action.kind)
        if action.kind == "key":
            self.open = False
        elif action.kind == "click" and action.y < 40:  # on the menu's title
            self.open = True
        return SimpleNamespace(ok=True)


def _mark(name: str) -> Effect:
    item = _el("check menu item", name, (0, 0, 1, 1))
    return Effect(kind="state", signature=item.signature, state="checked", before=False, after=True, name=name,
                  reveal=[{"kind": "click", "target": {"signature": _el("menu", "Markup", (0, 0, 1, 1)).signature}}])


def test_hidden_effects_that_share_a_menu_are_revealed_once():
    env = MenuEnv(checked={"BibTeX"})
    closed = env.observe()
    _, missed = revealed_problems(env, [_mark("AsciiDoc"), _mark("BibTeX")], closed)
    assert env.log.count("click") == 1  # one opening of the menu for both, then Escape
    assert env.log[-1] == "key" and not env.open
    assert set(missed) == {0} and "AsciiDoc" in missed[0]  # BibTeX is checked, AsciiDoc is not


def test_siblings_with_hidden_effects_share_one_negative_control(runs, monkeypatch):
    """Two languages of one submenu: the same control run (path, then the neutral spot) serves both,
    and the menu is revealed once to read both marks; a mark that shows after the control makes only
    its own skill unverified."""
    ex, lib, log, script = runs
    env = ex.env = MenuEnv(checked={"BibTeX"})
    script["control"] = SkillRunResult(ok=True, observation=env.observe())
    for name in ("AsciiDoc", "BibTeX"):
        steps = [SkillStep(action={"kind": "click", "target": {"signature": s}}) for s in ("menu:Markup", name)]
        lib.add(Skill(name=f"Markup › {name}", app="demo", steps=steps, provenance="explored",
                      postcondition=Condition(effects=[_mark(name)]), extra={"own_steps": 1, "neutral": [300, 250]}))
    out = verify.verify_batch(ex, ["Markup › AsciiDoc", "Markup › BibTeX"])
    assert [kind for kind, _, _ in log].count("control") == 1
    assert env.log.count("click") == 1  # the reveal, once
    assert out == {"Markup › AsciiDoc": "verified", "Markup › BibTeX": "unverified"}


def test_a_neutral_spot_is_found_beside_a_maximized_text_view():
    """A maximized editor: menu bar, an info bar's label and a text view over the rest of the window.
    The likely spots all fall on the text view; the finer grid finds the strip the label leaves free."""
    obs = Observation(size=(1280, 800), elements=[
        _el("frame", "Untitled - Editor", (0, 0, 1280, 800)), _el("menu bar", "", (0, 19, 1280, 25)),
        _el("menu", "File", (0, 19, 39, 25)), _el("label", "Warning", (6, 47, 1268, 17)),
        _el("page tab list", "", (0, 70, 1280, 728)), _el("text", "", (1, 71, 1278, 726))])
    x, y = neutral_point(obs)
    busy = [e for e in obs.elements if e.role not in ("frame", "label")]
    assert obs.elements[0].contains(x, y) and not any(e.contains(x, y) for e in busy)


def test_a_scroll_on_the_way_to_a_hidden_effect_scrolls_or_is_skipped():
    """The path to a language below a long menu's fold scrolls it; revealing its mark replays that path:
    the scroll step scrolls where its item still shows, and is skipped where the menu kept its offset
    (the item it scrolled to is gone); it is never clicked."""
    env = MenuEnv(checked={"BibTeX"})
    scroll = {"kind": "scroll", "dy": 2, "target": {"signature": _el("check menu item", "Haxe", (0, 0, 1, 1)).signature}}
    mark = _mark("BibTeX")
    mark = mark.model_copy(update={"reveal": [*mark.reveal, scroll]})
    _, missed = revealed_problems(env, [mark], env.observe())
    assert missed == {} and env.log == ["click", "key"]  # Haxe is not on screen: the scroll is skipped
    env.log.clear()
    shown = mark.model_copy(update={"reveal": [*mark.reveal[:1], {**scroll, "target": {
        "signature": _el("check menu item", "AsciiDoc", (0, 0, 1, 1)).signature}}]})
    _, missed = revealed_problems(env, [shown], env.observe())
    assert missed == {} and env.log == ["click", "scroll", "key"]


def test_a_new_tab_counts_under_a_tab_list_named_after_another_document():
    """Explored on an untitled document, featherpad's New adds 'page tab:Untitled#2' under a tab list
    named 'Untitled'. With a file open, the tab list is named after the file and the new tab is the
    first 'Untitled': the same element arrived, under other names. It counts when it arrived during the
    run; without a new tab the postcondition still fails."""
    def tabs(*names: str) -> Observation:
        els = [_el("frame", "", (0, 0, 1280, 800))]
        els += [UIElement(id=f"t{i}", role="page tab", name=n, bbox=(i * 100, 70, 100, 25), source="a11y",
                          signature=f"application:FeatherPad/frame:/page tab list:{names[0]}/page tab:{n}")
                for i, n in enumerate(names)]
        return Observation(size=(1280, 800), elements=els)

    sig = "application:FeatherPad/frame:/page tab list:Untitled/page tab:Untitled#2"
    post = Condition(present=[sig], effects=[Effect(kind="appeared", signature=sig, role="page tab", name="Untitled")])
    start, after = tabs("notes.txt"), tabs("notes.txt", "Untitled")
    assert condition_problems(post, after, start) == []
    assert condition_problems(post, after)  # no start: the exact names are asked for
    assert condition_problems(post, start, start)  # nothing arrived


def test_a_path_label_that_reads_otherwise_after_a_reset_is_dropped_not_failed(runs, monkeypatch):
    """featherpad's info bar read "The file does not exist." when *Paste Date and Time* was explored and
    "Root Instance" after a reset: the skill's own effect held, only the path's label differed. The label
    leaves the postcondition and the skill is verified again; a replay whose own effect is missing still
    fails."""
    ex, lib, log, script = runs
    label = Effect(kind="text", signature="label:info", slot="frame|label#0", role="label", name="display",
                   before="The file does not exist.", after="The file does not exist.", inherited=True)
    own = Effect(kind="text", signature="text:doc", slot="frame|text#0", role="text", name="document",
                 before="", after="Nov 29, 2026")
    steps = [SkillStep(action={"kind": "click", "target": {"signature": s}}) for s in ("menu:Edit", "item:Paste")]
    lib.add(Skill(name="Edit › Paste Date", app="demo", steps=steps, provenance="explored",
                  postcondition=Condition(effects=[label, own]), extra={"own_steps": 1, "neutral": None}))

    def look(info: str, doc: str) -> Observation:
        return Observation(size=(400, 300), elements=[
            _el("label", info, (0, 0, 200, 20)).model_copy(update={"path": ["frame"]}),
            _el("text", "", (0, 30, 400, 200)).model_copy(update={"path": ["frame"], "value": doc})])

    assert own.check(look("Root Instance", "Nov 29, 2026")) is None
    assert label.check(look("Root Instance", "Nov 29, 2026")) is not None
    outcomes = iter([SkillRunResult(ok=False, error="display shows 'Root Instance'",
                                    observation=look("Root Instance", "Nov 29, 2026"))] + [SkillRunResult(ok=True)] * 2)
    monkeypatch.setitem(script, "own", None)
    monkeypatch.setattr(verify, "run_skill", lambda skill, *a, **k: script["control"] if skill.name.endswith(
        "(negative control)") else next(outcomes))
    assert verify.verify_skill(ex, "Edit › Paste Date") == "verified"
    assert lib.get("Edit › Paste Date").postcondition.effects == [own]

    lib.add(Skill(name="Edit › Paste Date", app="demo", steps=steps, provenance="explored",
                  postcondition=Condition(effects=[label, own]), extra={"own_steps": 1, "neutral": None}))
    outcomes = iter([SkillRunResult(ok=False, error="document shows ''", observation=look("Root Instance", ""))]
                    + [SkillRunResult(ok=True)] * 2)
    assert verify.verify_skill(ex, "Edit › Paste Date") == "failed"


def test_a_batch_stores_each_skill_verified_as_soon_as_its_own_replays_pass(runs, monkeypatch):
    """Siblings sharing one control: the control runs once, right after the first one's replays, and
    each is stored as verified when its replays pass, so a budget that ends mid-batch keeps the first."""
    ex, lib, log, script = runs
    script["control"] = SkillRunResult(ok=True, observation=Observation())  # its path ran; no box is checked
    ex.env = SimpleNamespace(observe=Observation)
    for name in ("Wrap", "Spell", "Ruler"):
        steps = [SkillStep(action={"kind": "click", "target": {"signature": s}}) for s in ("menu:View", f"check:{name}")]
        effect = Effect(kind="state", signature=f"check:{name}", state="checked", before=False, after=True, name=name)
        lib.add(Skill(name=f"View › {name}", app="demo", steps=steps, postcondition=Condition(effects=[effect]),
                      provenance="explored", extra={"own_steps": 1, "neutral": [300, 250]}))

    class Spent(Exception):
        pass

    def budget():
        if sum(1 for kind, _, _ in log if kind == "own") >= 4:  # Ruler's replays cannot be afforded
            raise Spent

    monkeypatch.setattr(ex, "check_budget_time", budget)
    with pytest.raises(Spent):
        verify.verify_batch(ex, ["View › Wrap", "View › Spell", "View › Ruler"])
    assert [kind for kind, _, _ in log] == ["own", "own", "control", "own", "own"]
    assert [lib.get(f"View › {n}").status for n in ("Wrap", "Spell")] == ["verified", "verified"]
    assert lib.get("View › Ruler").status != "verified"


def test_a_batch_replays_the_shortest_skills_first(runs):
    ex, lib, log, _ = runs
    _skill(lib, neutral=None)
    lib.add(Skill(name="Wrap", app="demo", steps=[SkillStep(action={"kind": "click", "target": {"signature": "b:W"}})],
                  provenance="explored", extra={"own_steps": 1, "neutral": None},
                  postcondition=Condition(effects=[Effect(kind="state", signature="b:W", state="pressed", after=True)])))
    verify.verify_batch(ex, ["View › Wrap", "Wrap"])
    assert [n for kind, n, _ in log if kind == "own"] == [1, 1, 2, 2]
