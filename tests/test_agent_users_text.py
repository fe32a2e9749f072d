"""A command the explorer verified on its own typed text ("type document › Edit › Sort Lines") runs on
the user's text: without the typing, the whole text selected first unless the request is about the
selection, and a success only when the text changed (cua.agent.skill_calls.on_users_text)."""

from cua.agent.boundary import _types_sample
from cua.agent.skill_calls import changed_text, on_users_text
from cua.env.base import ActionResult
from cua.perception.elements import Observation, UIElement
from skills.effects import Effect
from skills.skill import Condition, Skill, SkillStep
from skills.units import typed_context

DOC = "application:FeatherPad/frame:/text:"
SLOT = "application:FeatherPad/frame:|text#0"


def _sort_lines() -> Skill:
    acts = [{"kind": "click", "target": {"signature": DOC, "role": "text"}}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
            {"kind": "type", "text": "hello World\nzoo  \n\t        abc def"}, {"kind": "hotkey", "keys": ["ctrl", "a"]},
            {"kind": "click", "target": {"text": "Edit", "role": "menu item"}},
            {"kind": "click", "target": {"text": "Sort Lines", "role": "menu item"}}]
    effects = [Effect(kind="text", slot=SLOT, name="document", before="hello World\nzoo  \n\t        abc def",
                      after="\t        abc def\nhello World\nzoo  "), Effect(kind="title", after="*Untitled")]
    return Skill(name="type document › Edit › Sort Lines", app="featherpad", status="verified",
                 steps=[SkillStep(action=a) for a in acts], postcondition=Condition(effects=effects),
                 extra={"ui_path": ["type document", "Edit", "Sort Lines"]})


def _doc(text: str) -> Observation:
    return Observation(elements=[UIElement(id="d", role="text", name="", bbox=(0, 100, 800, 500), source="a11y",
                                           states=["editable", "multi-line", "showing"], value=text,
                                           path=["application:FeatherPad", "frame:"])], size=(800, 600))


def test_the_typing_is_left_out_and_the_text_must_change():
    skill = _sort_lines()
    assert typed_context(skill) == 4 and not _types_sample(skill)  # a candidate for requests that type nothing
    whole = on_users_text(skill, "put these lines into alphabetical order")
    assert [s.action["kind"] for s in whole.steps] == ["hotkey", "click", "click"]  # select all, Edit, Sort Lines
    assert whole.postcondition.effects == [] and whole.postcondition.state_key is None  # not the sample's result
    part = on_users_text(skill, "sort the lines I've highlighted")
    assert [s.action.get("target", {}).get("text") for s in part.steps] == ["Edit", "Sort Lines"]
    assert changed_text(skill, _doc("pear\napple"), _doc("apple\npear"), any_of=True) == ""
    assert changed_text(skill, _doc("apple\npear"), _doc("apple\npear"), any_of=True) == "document did not change"


def test_other_skills_are_left_alone():
    typed = _sort_lines().model_copy(update={"name": "type document", "extra": {"ui_path": ["type document"]}})
    assert typed_context(typed) == 0 and on_users_text(typed, "type something") is None
    field = typed.model_copy(update={"name": "Search › type text", "extra": {"ui_path": ["Search", "type text"]}})
    assert on_users_text(field, "search") is None and _types_sample(field)


class _ToggleEnv:
    """A window with one toggle button, pressed or not; counts observations, logs actions."""

    def __init__(self, pressed: bool) -> None:
        self.pressed, self.acted = pressed, []

    def observe(self) -> Observation:
        states = ["showing", "visible", "enabled", *(["pressed"] if self.pressed else [])]
        return Observation(elements=[UIElement(id="w", role="toggle button", name="Wrap", bbox=(10, 10, 60, 20),
                                               source="a11y", states=states, path=["application:Ed", "frame:"])],
                           size=(800, 600))

    def act(self, action) -> ActionResult:
        self.acted.append(action.kind)
        return ActionResult(action=action.model_dump())


def test_a_toggle_already_on_when_the_request_named_no_on_or_off_is_no_success():
    """"The long rows fold over onto several lines; keep each row on one line" named no on or off: read as
    "on", a toggle already on means the request most likely wanted it the other way. Nothing is clicked and
    the run is no success (a fresh15 false success); said "turn on", already on is done."""
    from cua.agent.boundary import Call, Decision
    from cua.agent.skill_calls import run_calls
    sig = "application:Ed/frame:/toggle button:Wrap"
    wrap = Skill(name="Wrap", app="ed", status="verified", extra={"role": "toggle button", "ui_path": ["Wrap"]},
                 steps=[SkillStep(action={"kind": "click", "target": {"signature": sig, "text": "Wrap",
                                                                     "role": "toggle button"}})],
                 postcondition=Condition(effects=[Effect(kind="state", signature=sig, role="toggle button", name="Wrap",
                                                         state="pressed", before=False, after=True)]))
    env = _ToggleEnv(pressed=True)
    outcome, message = run_calls(Decision("skill", calls=[Call(wrap, {}, "on", "keep each row on one line",
                                                               implied=True)]), env, None)
    assert outcome == "failure" and "already on" in message and "turn it off" in message and env.acted == []
    outcome, _ = run_calls(Decision("skill", calls=[Call(wrap, {}, "on", "turn on wrap")]), env, None)
    assert outcome == "success" and "click" not in env.acted


def test_a_command_explored_on_an_empty_document_succeeds_on_the_users_text():
    """"Duplicate Line" explored on an empty document recorded '' -> '\\n'. Run on the user's text (the
    agent's runs, relative=True) it must change that text, not reach '\\n'; a replay from the explored start
    (verification) still wants the recorded result, and a text that did not change is no success."""
    from skills.runner import condition_problems
    dup = Condition(effects=[Effect(kind="text", slot=SLOT, name="document", before="", after="\n")])
    start, done = _doc("Minutes"), _doc("Minutes\nMinutes")
    assert condition_problems(dup, done, start, relative=True) == []
    assert condition_problems(dup, start, start, relative=True) == ["document did not change"]
    assert condition_problems(dup, done, start) == ["document shows 'Minutes\\nMinutes', expected '\\n'"]
    assert condition_problems(dup, _doc("\n"), _doc(""), relative=True) == []  # the explored start: exact
    assert condition_problems(dup, _doc("x"), _doc(""), relative=True) == ["document shows 'x', expected '\\n'"]
    # Paste Date and Time also marked the tab title modified; on the user's modified document it is marked
    # already: one of the texts that started otherwise must change, not each
    tab = "application:FeatherPad/frame:|label#0"
    both = Condition(effects=[*dup.effects, Effect(kind="text", slot=tab, name="tab", before="Untitled",
                                                   after="*Untitled")])

    def screen(text: str, title: str) -> Observation:
        label = UIElement(id="t", role="label", name=title, bbox=(0, 40, 100, 20), source="a11y",
                          states=["showing"], path=["application:FeatherPad", "frame:"])
        return _doc(text).model_copy(update={"elements": [*_doc(text).elements, label]})
    assert condition_problems(both, screen("Minutes\nMinutes", "*Draft"), screen("Minutes", "*Draft"), relative=True) == []
    assert condition_problems(both, screen("Minutes", "*Draft"), screen("Minutes", "*Draft"),
                              relative=True) == ["document, tab did not change"]


class _ModeEnv:
    """A calculator with two buttons: 'Paper' shows an Enter key (paper mode), 'Sci' takes it away."""

    def __init__(self) -> None:
        self.paper = False

    def observe(self) -> Observation:
        els = [UIElement(id="p", role="push button", name="Paper", bbox=(10, 10, 60, 20), source="a11y",
                         states=["showing", "visible", "enabled"], path=["application:Calc", "frame:"]),
               UIElement(id="s", role="push button", name="Sci", bbox=(80, 10, 60, 20), source="a11y",
                         states=["showing", "visible", "enabled"], path=["application:Calc", "frame:"])]
        if self.paper:
            els.append(UIElement(id="e", role="push button", name="Enter", bbox=(10, 50, 60, 20), source="a11y",
                                 states=["showing", "visible", "enabled"], path=["application:Calc", "frame:"]))
        return Observation(elements=els, size=(800, 600))

    def act(self, action) -> ActionResult:
        self.paper = action.x < 70  # a click on Paper turns paper mode on, one on Sci off
        return ActionResult(action=action.model_dump())


def test_a_later_call_that_undoes_an_earlier_ones_effect_is_no_success():
    """"Paper mode, then degrees": the way to Degrees went through Scientific Mode, which leaves paper mode.
    Each skill's postcondition held when it ran; the run is a failure naming what was undone."""
    from cua.agent.boundary import Call, Decision
    from cua.agent.skill_calls import run_calls

    def button(name: str, effects: list[Effect]) -> Skill:
        sig = f"application:Calc/frame:/push button:{name}"
        return Skill(name=name, app="calc", status="verified", extra={"role": "push button", "ui_path": [name]},
                     steps=[SkillStep(action={"kind": "click", "target": {"signature": sig, "text": name,
                                                                         "role": "push button"}})],
                     postcondition=Condition(effects=effects))
    enter = "application:Calc/frame:/push button:Enter"
    paper = button("Paper", [Effect(kind="appeared", signature=enter, role="push button", name="Enter")])
    sci = button("Sci", [Effect(kind="disappeared", signature=enter, role="push button", name="Enter")])
    outcome, message = run_calls(Decision("skill", calls=[Call(paper), Call(sci)]), _ModeEnv(), None)
    assert outcome == "failure" and "undid" in message and "Paper" in message, message
    outcome, message = run_calls(Decision("skill", calls=[Call(sci), Call(paper)]), _ModeEnv(), None)
    assert outcome == "success", message  # what a call hides is no lasting effect: a later call may show it
    env = _ModeEnv()
    outcome, message = run_calls(Decision("skill", calls=[Call(paper)]), env, None)
    assert outcome == "success" and env.paper
