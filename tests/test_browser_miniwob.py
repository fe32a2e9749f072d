"""MiniWoB++ adapter on real Chromium: task list, seeded episodes, the page's own reward."""

from __future__ import annotations

import pytest

from cua.actions import Click, Key, Target, Type
from cua.env import EnvError, make_env
from cua.eval.miniwob import MiniWoBTask, list_tasks


@pytest.fixture(scope="module")
def env():
    e = make_env("browser:about:blank", sources="dom")
    try:
        yield e
    finally:
        e.close()


def wanted_button(instruction: str) -> str:
    assert instruction.startswith('Click on the "'), instruction
    return instruction.split('"')[1]


def test_list_tasks_covers_the_package():
    tasks = list_tasks()
    assert len(tasks) >= 50
    assert {"click-button", "enter-text", "click-checkboxes", "login-user"} <= set(tasks)


def test_unknown_task_names_the_known_ones():
    with pytest.raises(EnvError, match="unknown MiniWoB"):
        MiniWoBTask("click-buton-typo")


def test_same_seed_same_instruction_and_right_button_scores(env):
    task = MiniWoBTask("click-button", seed=7)
    first = task.start(env)
    assert task.start(env) == first  # seeded: the same episode again
    assert not task.done(env) and task.reward(env) == 0.0
    obs = env.observe()
    assert not any(e.name == "START" for e in obs.elements)  # the start cover is gone
    r = env.act(Click(target=Target(text=wanted_button(first), role="push button")))
    assert r.ok
    assert task.done(env) and task.reward(env) == task.raw_reward(env) == 1.0
    assert 0.5 < task.time_scaled_reward(env) <= 1.0


def test_wrong_button_scores_at_most_zero(env):
    task = MiniWoBTask("click-button", seed=11)
    want = wanted_button(task.start(env))
    obs = env.observe()
    wrong = [e for e in obs.elements if e.role == "push button" and e.name != want]
    assert wrong, "this seed has only the wanted button; pick another seed"
    assert env.act(Click(element_id=wrong[0].id)).ok
    assert task.done(env) and task.reward(env) <= 0


def test_instructions_differ_across_tasks_and_seeds(env):
    a = MiniWoBTask("enter-text", seed=1).start(env)
    b = MiniWoBTask("enter-text", seed=2).start(env)
    assert a and b and a != b
    assert "Enter" in a or "enter" in a.lower()


def test_a_select_lists_its_options_and_takes_keyboard_choice(env):
    task = MiniWoBTask("choose-list", seed=1)
    want = task.start(env).split("Select ")[1].split(" from")[0]
    select = next(e for e in env.observe().elements if e.role == "combo box")
    assert want in select.attrs["options"] and select.value != want
    assert env.act(Click(element_id=select.id)).ok
    assert env.act(Type(text=want)).ok and env.act(Key(key="enter")).ok
    assert next(e for e in env.observe().elements if e.role == "combo box").value == want
    assert env.act(Click(target=Target(text="Submit", role="push button"))).ok
    assert task.reward(env) > 0


def test_the_page_own_time_limit_gives_the_time_scaled_reward(env):
    task = MiniWoBTask("click-button", seed=7, time_limit=None)
    want = wanted_button(task.start(env))
    assert env.evaluate("core.EPISODE_MAX_TIME") == 10000  # the page's default, untouched
    env.observe()
    assert env.act(Click(target=Target(text=want, role="push button"))).ok
    assert task.done(env)
    assert task.reward(env) == task.time_scaled_reward(env) < 1.0  # scaled by time used (or -1 if timed out)
