"""Perception on a real mousepad sandbox (Xvfb + openbox + AT-SPI) and the issue's done-when commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cua.actions import Target
from cua.perception.ground import ground
from cua.perception.ocr import ocr
from cua.perception.pipeline import Perceiver

ROOT = Path(__file__).resolve().parents[1]
CUA = [sys.executable, "-m", "cua.cli"] if not (ROOT / ".venv/bin/cua").exists() else [str(ROOT / ".venv/bin/cua")]


@pytest.fixture(scope="module")
def mousepad():
    from cua.env.desktop import SandboxEnv

    with SandboxEnv("mousepad", sources="a11y") as env:
        yield env


def test_ocr_reads_the_real_menu_bar_inside_the_atspi_boxes(mousepad):
    obs = mousepad.observe()
    menus = {e.name: e for e in obs.elements if e.source == "a11y" and e.role == "menu"}
    assert {"File", "Edit", "Search"} <= set(menus), sorted(menus)
    words = {e.name: e for e in ocr(obs.image())}
    for name in ("File", "Edit", "Search", "View", "Help"):
        assert name in words, sorted(words)
        assert menus[name].contains(*words[name].center), (name, words[name].bbox, menus[name].bbox)


def test_fused_observations_of_the_same_screen_have_equal_ids_and_signatures(mousepad):
    obs = mousepad.observe()
    a11y = [e for e in obs.elements if e.source == "a11y"]
    p = Perceiver("a11y,ocr", incremental=False)
    first, timings = p.perceive(obs.image(), a11y)
    second, _ = Perceiver("a11y,ocr", incremental=False).perceive(obs.image().copy(), a11y)
    assert [(e.id, e.signature) for e in first] == [(e.id, e.signature) for e in second]
    assert {"ocr", "merge"} <= set(timings)
    search = [e for e in first if e.name == "Search"]
    assert len(search) == 1 and search[0].source == "a11y"  # OCR's copy of the word was folded in
    g = ground(Target(text="search", role="menu"), obs.model_copy(update={"elements": first}))
    assert g.element.role == "menu" and g.element.contains(*g.point)


def _run(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(CUA + args, check=False, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_cua_observe_writes_a11y_and_ocr_elements_marks_and_timings(tmp_path):
    out = tmp_path / "d"
    r = _run(["observe", "--env", "sandbox:mousepad", "--out", str(out)])
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((out / "observation.json").read_text())
    sources = {s for e in data["elements"] for s in [e["source"], *e["attrs"].get("sources", [])]}
    assert {"a11y", "ocr"} <= sources, sources  # OCR's reads of the menu words are folded into a11y menus
    search = next(e for e in data["elements"] if e["name"] == "Search")
    assert search["source"] == "a11y" and search["attrs"]["sources"] == ["a11y", "ocr"]
    assert {"a11y", "ocr", "merge"} <= set(data["timings"]), data["timings"]
    ids = [e["id"] for e in data["elements"]]
    assert ids == [f"e{i}" for i in range(len(ids))]
    shot, som = Image.open(out / "observation.png"), Image.open(out / "som.png")
    assert som.size == shot.size
    assert (np.asarray(som.convert("RGB"), np.int16) - np.asarray(shot.convert("RGB"), np.int16)).any()


def test_cua_act_click_text_search_opens_the_search_menu_through_grounding(tmp_path):
    out = tmp_path / "a"
    r = _run(["act", "--env", "sandbox:mousepad", 'click(text="Search")', "--out", str(out)])
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["point"], result
    after = json.loads((out / "observation.json").read_text())["elements"]
    # a11y or OCR (AT-SPI can time out on a loaded machine; the pixels still show the open menu)
    search = next(e for e in after if e["name"] == "Search" and e["role"] in ("menu", "text"))
    x, y, w, h = search["bbox"]
    px, py = result["point"]
    assert x - 12 <= px < x + w + 12 and y - 6 <= py < y + h + 6, (result["point"], search)
    names = {e["name"] for e in after if e["role"] in ("menu item", "text")}
    assert {"Find", "Find Next", "Find and Replace..."} <= names, names
