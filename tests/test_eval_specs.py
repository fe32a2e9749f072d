"""Task specs, the OSWorld subset, and the checker registry (no desktop needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cua.eval.checkers import CHECKERS, CheckContext, CheckerError, evaluate
from cua.eval.task import TaskError, load_task, load_tasks, task_from_dict
from cua.perception.elements import Observation, UIElement

DATA = Path(__file__).parent / "data" / "osworld"
ROOT = Path(__file__).parent.parent


def test_bundled_suites_load():
    tasks = load_tasks([ROOT / "tasks"])
    ids = {t.id for t in tasks}
    assert len(ids) == len(tasks)
    assert sum(t.id.startswith("mousepad-") for t in tasks) >= 15
    # the replayable suites carry a reference; the paraphrase sets (tasks/paraphrases) are for the agent
    assert all(t.reference and t.reference.actions for t in tasks if not t.id.startswith("para-"))
    assert sum(t.id.startswith("para-") for t in tasks) >= 120


def test_osworld_task_keeps_its_own_evaluator():
    """An OSWorld task loads whole: its JSON under `osworld`, scored by cua.eval.osworld in the episode."""
    t = load_task(DATA / "supported.json")
    assert t.osworld and t.osworld["evaluator"]["func"] == "check_include_exclude"
    assert t.checker_tree() == {"type": "osworld"} and t.setup == []
    for name in ("unsupported_step.json", "unsupported_metric.json"):  # download / compare_table: loadable now
        assert load_task(DATA / name).osworld is not None


def test_osworld_malformed_task_is_named():
    with pytest.raises(TaskError, match="not an OSWorld task") as e:
        task_from_dict({"instruction": "x", "evaluator": {"conj": "xor", "func": "exact_match"}}, "bad.json")
    assert "bad.json" in str(e.value)


@pytest.mark.parametrize("content, suffix, words", [
    ("id: a\ninstruction: [unclosed", ".yaml", "not valid YAML"),
    ('{"id": "a"', ".json", "not valid JSON"),
    ("id: a\ncheckers: {type: file_exists, path: x}\n", ".yaml", "instruction: Field required"),
    ("id: a\ninstruction: b\ncheckers: {type: telepathy}\n", ".yaml", "unknown checker type 'telepathy'"),
    ("id: a\ninstruction: b\nsetup: [{type: launch_rocket}]\ncheckers: {type: file_exists, path: x}\n",
     ".yaml", "setup.0.type"),
    ("id: a b\ninstruction: b\ncheckers: {type: file_exists, path: x}\n", ".yaml", "id: String should match"),
    ("- 1\n- 2\n", ".yaml", "must be a mapping"),
])
def test_broken_task_files_get_precise_errors(tmp_path, content, suffix, words):
    f = tmp_path / f"broken{suffix}"
    f.write_text(content)
    with pytest.raises(TaskError, match=words) as e:
        load_task(f)
    assert str(f) in str(e.value)


def test_duplicate_ids_and_missing_paths(tmp_path):
    for n in ("a", "b"):
        (tmp_path / f"{n}.yaml").write_text("id: same\ninstruction: x\ncheckers: {type: file_exists, path: x}\n")
    with pytest.raises(TaskError, match="duplicate task id 'same'"):
        load_tasks([tmp_path])
    with pytest.raises(TaskError, match="no task file or directory"):
        load_tasks([tmp_path / "nope"])


class FakeEnv:
    def __init__(self, elements, title="Untitled 1 - Mousepad"):
        self.obs = Observation(elements=elements, window_title=title)

    def observe(self):
        return self.obs


def el(role, name, states=(), value=None, source="a11y"):
    return UIElement(id="e0", role=role, name=name, bbox=(0, 0, 10, 10), source=source, states=list(states),
                     value=value)


def test_checkers_pass_and_fail(tmp_path):
    env = FakeEnv([el("dialog", "Find and Replace"), el("check box", "Match case", ["checked"]),
                   el("text", "", value="hello world"), el("text", "OCR only", source="ocr")])
    ctx = CheckContext(env=env, home=tmp_path, proc_env=None)
    (tmp_path / "out.txt").write_text("saved text\n")
    cases = [
        ({"type": "a11y_exists", "role": "dialog", "name": "Find"}, True),
        ({"type": "a11y_exists", "role": "dialog", "name": "Find", "exact": True}, False),
        ({"type": "a11y_exists", "name": "OCR only"}, False),  # structured sources only
        ({"type": "a11y_state", "role": "check box", "name": "Match case", "state": "checked"}, True),
        ({"type": "a11y_state", "role": "check box", "name": "Match case", "state": "checked", "present": False}, False),
        ({"type": "a11y_text", "role": "text", "contains": "world"}, True),
        ({"type": "window_title", "contains": "Mousepad"}, True),
        ({"type": "window_title", "regex": "^Untitled \\d"}, True),
        ({"type": "file_exists", "path": "out.txt"}, True),
        ({"type": "file_contains", "path": "~/out.txt", "text": "saved"}, True),
        ({"type": "file_equals", "path": "out.txt", "content": "saved text"}, True),
        ({"type": "file_equals", "path": "out.txt", "content": "other"}, False),
        ({"type": "command_output", "command": [sys.executable, "-c", "print(6*7)"], "equals": "42"}, True),
        ({"any": [{"type": "file_exists", "path": "nope"}, {"type": "file_exists", "path": "out.txt"}]}, True),
        ({"all": [{"type": "file_exists", "path": "nope"}, {"type": "file_exists", "path": "out.txt"}]}, False),
        ({"not": {"type": "file_exists", "path": "nope"}}, True),
    ]
    for tree, want in cases:
        assert evaluate(tree, ctx) is want, tree


def test_checker_errors_are_not_failures(tmp_path):
    ctx = CheckContext(env=FakeEnv([]), home=tmp_path, proc_env=None)
    for tree in [{"type": "js", "expression": "1"},                       # needs the browser env
                 {"type": "file_exists", "where": "x"},                    # bad parameters
                 {"type": "command_output", "command": "ls -l", "contains": "x"},  # a shell string
                 {"type": "miniwob_reward"}]:                              # no miniwob page
        with pytest.raises(CheckerError):
            evaluate(tree, ctx)
    assert set(CHECKERS) >= {"a11y_exists", "a11y_state", "a11y_text", "window_title", "file_exists",
                             "file_contains", "file_equals", "command_output", "js", "miniwob_reward", "ocr_contains"}


def test_osworld_roundtrip_is_json_serialisable():
    t = task_from_dict(json.loads((DATA / "supported.json").read_text()), "supported.json")
    assert json.loads(t.model_dump_json())["id"] == "osworld-echo"
