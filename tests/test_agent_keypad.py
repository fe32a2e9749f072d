"""A calculation asked in words runs on the keypad the exploration found, and succeeds only when the
display shows the result computed from the request (skills.arithmetic, cua.agent.keypad)."""

from pathlib import Path

import pytest

from cua.agent.boundary import decide_request
from cua.agent.calibrate import DevRequest, verdict
from cua.agent.keypad import display_problem, key_step
from cua.perception.elements import Observation, UIElement
from skills.arithmetic import calculation
from skills.effects import Effect
from skills.library import SkillLibrary
from skills.skill import Condition, Skill, SkillStep

FIXTURE = Path(__file__).parent / "data" / "intent_mousepad_skills.json"
DISPLAY = UIElement(id="e0", role="label", name="0", bbox=(10, 10, 200, 30), path=["frame:calc", "panel:"], source="a11y",
                    signature="frame:calc/panel:/label:display")


def _key(label: str, prefix: tuple[str, ...] = (), follow: int = 0) -> Skill:
    def click(text: str) -> SkillStep:
        return SkillStep(action={"kind": "click", "target": {"text": text, "role": "push button",
                                                             "signature": f"frame:calc/push button:{text}"}})
    steps = [click(t) for t in (*prefix, label, *([prefix[-1]] if follow and prefix else []))]
    slot = "frame:calc/panel:|label#0"
    return Skill(name=" › ".join((*prefix, label)), app="calc", steps=steps, status="verified", verified_runs=2,
                 extra={"role": "push button", "own_steps": 1, **({"follow": follow} if follow else {})},
                 postcondition=Condition(effects=[Effect(kind="text", slot=slot, name="display", before="0",
                                                         after=label)]))


@pytest.fixture
def calc_lib(tmp_path):
    lib = SkillLibrary(tmp_path / "calc.db")
    for d in "123456789":
        lib.add(_key(d))
    lib.add(_key("0", prefix=("7",)))  # '0' acts only once a value is shown
    lib.add(_key("×", prefix=("7",), follow=1))  # an operator shows in what the next key does
    lib.add(_key("="))
    lib.add(_key("sqrt", prefix=("7",)))
    lib.add(_key("+/-", prefix=("7",)))
    yield lib
    lib.close()


@pytest.mark.parametrize("text,keys,result", [
    ("how much is 17 multiplied by 23", "1 7 times 2 3 equals", 391),
    ("what's the square root of 1369?", "1 3 6 9 sqrt", 37),
    ("take 58 and flip its sign so it's negative", "5 8 negate", -58),
    ("subtract 5 from 20 please", "2 0 minus 5 equals", 15),
    ("what is seven times eight", "7 times 8 equals", 56),
    ("calculate 3.5 + 1.25", "3 . 5 plus 1 . 2 5 equals", 4.75),
    ("what's 2 to the power of 10", "2 power 1 0 equals", 1024),
    ("what is forty-two plus three hundred and five", "4 2 plus 3 0 5 equals", 347),
    ("how much is 3.2 lots of 5?", "3 . 2 times 5 equals", 16),
    ("if 91 gets split evenly seven ways, how much is each share?", "9 1 divide 7 equals", 13),
    ("how many times does 7 go into 91", "9 1 divide 7 equals", 13),
    ("what is 10 less than 30", "3 0 minus 1 0 equals", 20),
    ("double 17", "1 7 times 2 equals", 34),
    ("turn 43 into a negative number", "4 3 negate", -43),
    ("take the square root of 144, then flip its sign", "1 4 4 sqrt negate", -12),
    ("take 58, then flip its sign", "5 8 negate", -58),
    ("add 2 and 3, then multiply by 4", "2 plus 3 equals times 4 equals", 20),
    ("7 times 6 and then add 8 to it", "7 times 6 equals plus 8 equals", 50),
    ("so what is 2 plus 3 then?", "2 plus 3 equals", 5),
])
def test_a_calculation_in_words_is_its_keys_and_result(text, keys, result):
    calc = calculation(text)
    assert calc is not None and " ".join(calc.keys) == keys and calc.result == result
    assert [k for k, e in zip(calc.keys, calc.entries) if not e] == [k for k in keys.split() if not k.isdigit()
                                                                     and k != "."]


@pytest.mark.parametrize("text", ["I need to multiply two 3x3 matrices together", "convert 100 US dollars into euros",
                                  "plot y = x squared as a graph", "set the tab width to 4", "divide 1 by 0",
                                  "change every occurrence of one phrase into a different one", "58",
                                  "add 2 and 3, then save the file", "what is 4 and then some",
                                  "how many days are there between the 3rd of march and the 19th of august"])
def test_a_request_with_more_than_a_calculation_in_it_is_none(text):
    assert calculation(text) is None


def test_a_calculation_runs_the_keypads_keys_and_names_the_operation_it_asked_for(calc_lib):
    d = decide_request("how much is 17 multiplied by 23", calc_lib, has_model=False)
    assert d.kind == "skill" and [c.skill.name for c in d.calls] == ["1", "7", "7 › ×", "2", "3", "="]
    assert [c.entry for c in d.calls] == [True, True, False, True, True, False]
    assert d.calculation.result == 391 and "391" in d.explain[-1]
    assert verdict(DevRequest("17 x 23", ["="]), d, calc_lib) == "right"
    assert verdict(DevRequest("17 x 23", ["×"]), d, calc_lib) == "right"
    assert verdict(DevRequest("17 x 23", ["sqrt"]), d, calc_lib) == "wrong"
    sq = decide_request("what's the square root of 1369?", calc_lib, has_model=False)
    assert [c.skill.name for c in sq.calls] == ["1", "3", "6", "9", "7 › sqrt"]


def test_a_calculation_needing_a_key_the_library_lacks_is_refused_naming_it(calc_lib):
    d = decide_request("what's the sine of 30", calc_lib, has_model=False)
    assert d.kind == "outside" and "'sin'" in d.reason and "calculation" in d.reason
    assert decide_request("what's the sine of 30", calc_lib, has_model=True).kind == "model"


def test_a_library_without_a_keypad_reads_a_calculation_as_any_other_request(tmp_path):
    lib = SkillLibrary(tmp_path / "lib.db")
    lib.import_json(FIXTURE)
    d = decide_request("how much is 17 multiplied by 23", lib, has_model=False)
    assert d.calculation is None and d.kind == "outside"
    lib.close()


def test_a_key_runs_alone_when_on_screen_without_its_sample_value_or_the_key_after_it(calc_lib):
    times = calc_lib.get("7 › ×")
    shown = Observation(size=(800, 600), elements=[DISPLAY, UIElement(id="e1", role="push button", name="×", bbox=(10, 50, 30, 30), source="a11y",
                                                     signature="frame:calc/push button:×")])
    assert [s.action["target"]["text"] for s in key_step(times, shown).steps] == ["×"]
    step = key_step(times, Observation(size=(800, 600), elements=[DISPLAY]))  # not on screen: the way to it, less sample keys
    assert [s.action["target"]["text"] for s in step.steps] == ["×"]
    assert not step.postcondition.effects and not step.preconditions.present


def test_success_needs_the_display_to_show_the_computed_result(calc_lib):
    calc = calculation("how much is 17 multiplied by 23")
    keys = [calc_lib.get("=")]
    right = Observation(size=(800, 600), elements=[DISPLAY.model_copy(update={"name": "391"})])
    wrong = Observation(size=(800, 600), elements=[DISPLAY.model_copy(update={"name": "23"})])
    assert display_problem(calc, keys, right) == ""
    scientific = Observation(size=(800, 600), elements=[DISPLAY.model_copy(update={"name": "391 DEC HEX OCT BIN DEG"})])
    assert display_problem(calc, keys, scientific) == ""  # galculator's scientific display adds its modes
    assert "'23'" in display_problem(calc, keys, wrong) and "391" in display_problem(calc, keys, wrong)


def test_an_angle_is_in_degrees_unless_the_request_says_radians_and_a_radian_display_is_named(calc_lib):
    deg, rad = calculation("what is the sine of 30"), calculation("the sine of 30 radians")
    assert deg.result == 0.5 and rad.result == pytest.approx(-0.98803162) and rad.other_unit is None
    radian_display = Observation(size=(800, 600), elements=[DISPLAY.model_copy(update={"name": "-0.988031624 DEG RAD"})])
    problem = display_problem(deg, [calc_lib.get("=")], radian_display)
    assert "works in radians" in problem and display_problem(rad, [calc_lib.get("=")], radian_display) == ""


def test_a_calculation_may_start_from_the_number_on_the_display():
    """No digits are typed for the number shown; the result waits for the display to be read."""
    from skills.arithmetic import calculation

    neg = calculation("make that number negative")
    assert neg.keys == ("negate",) and neg.from_display and neg.on(12).result == -12
    assert neg.result != neg.result  # NaN until the display is read: no display can show it
    root = calculation("What's the square root of the number on the display?")
    assert root.keys == ("sqrt",) and root.on(169).result == 13 and root.on(-4) is None
    add = calculation("add 5 to the number on the display")
    assert add.keys == ("plus", "5", "equals") and add.on(2).result == 7
    # a number the request says is entered already is not typed again; its result is known
    fact = calculation("What's 6 factorial? The 6 is already on the display.")
    assert fact.keys == ("factorial",) and not fact.from_display and fact.result == 720
    assert calculation("I've already typed in 144. take its square root").keys == ("sqrt",)
    assert calculation("what is 17 times 23").keys == ("1", "7", "times", "2", "3", "equals")
    assert calculation("show the display in binary") is None and calculation("clear the display") is None
