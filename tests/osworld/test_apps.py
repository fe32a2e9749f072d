"""OSWorld tasks on the apps of `make osworld-apps` (LibreOffice here): open, act, post-config save, metric.

Runs only where LibreOffice is installed (`make osworld-apps`); elsewhere such tasks are `needs-app
libreoffice` and this module reports the same. The task is in OSWorld's format with OSWorld's own
post-config (activate the window, `python -c "import pyautogui; ..."` to save, Enter to keep the
format); a scripted replay types into the sheet as an agent would, and OSWorld's `compare_table`
compares the file LibreOffice saved with the expected one from the asset cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cua.eval.osworld.assets import asset_name
from cua.eval.osworld.check import installed
from cua.eval.runner import EvalConfig, close_worker_envs, run_eval
from cua.eval.task import Reference, task_from_dict

pytestmark = pytest.mark.skipif(not installed("libreoffice"), reason="needs-app libreoffice (make osworld-apps)")

SAVE = ("import pyautogui; import time; pyautogui.hotkey('ctrl', 's'); time.sleep(0.5); pyautogui.press('enter');")


def sheet(path: Path, values: list) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    for i, v in enumerate(values, start=1):
        ws.cell(row=i, column=1, value=v)
    wb.save(path)


def calc_task(tid: str, src: str, expected: str) -> dict:
    return {
        "id": tid, "snapshot": "libreoffice_calc", "instruction": "Put the total of column A in A4.",
        "config": [{"type": "download", "parameters": {"files": [{"url": src, "path": "/home/user/data.xlsx"}]}},
                   {"type": "open", "parameters": {"path": "/home/user/data.xlsx"}}],
        "related_apps": ["libreoffice_calc"],
        "evaluator": {
            "postconfig": [
                {"type": "activate_window", "parameters": {"window_name": "data.xlsx - LibreOffice Calc", "strict": True}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
                {"type": "execute", "parameters": {"command": ["python", "-c", SAVE]}},
                {"type": "sleep", "parameters": {"seconds": 2}}],
            "func": "compare_table",
            "result": {"type": "vm_file", "path": "/home/user/data.xlsx", "dest": "data.xlsx"},
            "expected": {"type": "cloud_file", "path": expected, "dest": "expected.xlsx"},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}},
    }


def test_calc_task_saved_by_postconfig_is_scored_by_compare_table(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    src, expected = "http://assets.example/data.xlsx", "http://assets.example/expected.xlsx"
    sheet(cache / asset_name(src), [1, 2, 3])
    sheet(cache / asset_name(expected), [1, 2, 3, 6])
    typed = task_from_dict(calc_task("calc-typed", src, expected), str(tmp_path / "libreoffice_calc/t.json"))
    typed = typed.model_copy(update={"reference": Reference(actions=[
        'hotkey("ctrl", "Home")', 'key("Down")', 'key("Down")', 'key("Down")', 'type(text="6\\n")'])})
    idle = task_from_dict(calc_task("calc-idle", src, expected), str(tmp_path / "libreoffice_calc/t.json"))
    out = tmp_path / "out"
    try:
        typed_r = run_eval([typed], EvalConfig(out=str(out), replay="reference", assets=str(cache)))[0]
        idle_r = run_eval([idle], EvalConfig(out=str(out), max_steps=0, assets=str(cache)))[0]
    finally:
        close_worker_envs()
    assert (typed_r.outcome, typed_r.score, typed_r.error) == ("success", 1.0, None), typed_r
    assert (idle_r.outcome, idle_r.score, idle_r.error) == ("failure", 0.0, None), idle_r
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["domain"] for r in rows] == ["libreoffice_calc", "libreoffice_calc"]


def test_impress_slide_pane_task_is_scored_on_the_whole_accessibility_tree(tmp_path):
    """OSWorld's own task ef9d12bd: its set-up closes Impress's slide pane; `check_left_panel` looks for the
    tree's `document-frame` named "Slides View". Doing nothing scores 0; the View menu's Slide Pane scores 1."""
    path = Path(__file__).resolve().parents[2] / "tasks/osworld/examples/libreoffice_impress" \
        / "ef9d12bd-bcee-4ba0-a40e-918400f43ddf.json"
    idle = task_from_dict(json.loads(path.read_text()), str(path))
    reopened = idle.model_copy(update={"id": "reopened", "reference": Reference(actions=[
        'key("F10")', 'key("Right")', 'key("Right")', *['key("Down")'] * 11, 'key("Return")', 'wait(2)'])})
    out = tmp_path / "out"
    try:
        idle_r = run_eval([idle], EvalConfig(out=str(out), max_steps=0))[0]
        done_r = run_eval([reopened], EvalConfig(out=str(out), replay="reference"))[0]
    finally:
        close_worker_envs()
    assert (idle_r.score, idle_r.error, idle_r.details) == (0.0, None, ["check_left_panel = 0"]), idle_r
    assert (done_r.score, done_r.error, done_r.details) == (1.0, None, ["check_left_panel = 1"]), done_r


def test_calc_cells_in_the_accessibility_tree(tmp_path):
    """A Calc sheet has millions of cells; the tree holds the showing ones (as OSWorld's server walks it),
    with their text: a rule on cell A1's text scores 0 idle and 1 once 42 is typed into it."""
    task = {"id": "calc-a11y", "snapshot": "libreoffice_calc", "instruction": "Type 42 into A1.",
            "config": [{"type": "launch", "parameters": {"command": ["libreoffice", "--calc"]}},
                       {"type": "sleep", "parameters": {"seconds": 3}}],
            "related_apps": ["libreoffice_calc"],
            "evaluator": {"func": "check_accessibility_tree", "result": {"type": "accessibility_tree"},
                          "expected": {"type": "rule", "rules": [
                              {"selectors": ['document-spreadsheet table > table-cell[name="B2"]']},
                              {"xpath": '//table-cell[@name="A1"]', "text": "42", "exact": True}]}}}
    idle = task_from_dict(task, str(tmp_path / "libreoffice_calc/t.json"))
    typed = idle.model_copy(update={"id": "calc-a11y-typed", "reference": Reference(actions=[
        'hotkey("ctrl", "Home")', 'type(text="42\\n")', 'hotkey("ctrl", "Home")', 'wait(1)'])})
    out = tmp_path / "out"
    try:
        idle_r = run_eval([idle], EvalConfig(out=str(out), max_steps=0))[0]
        typed_r = run_eval([typed], EvalConfig(out=str(out), replay="reference"))[0]
    finally:
        close_worker_envs()
    assert (idle_r.score, idle_r.error) == (0.0, None), idle_r
    assert (typed_r.score, typed_r.error, typed_r.details) == (1.0, None, ["check_accessibility_tree = 1"]), typed_r
