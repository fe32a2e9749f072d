"""`cua demo` end to end with a smaller budget; its page, rendered in Chromium, shows what happened."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.timeout(600)  # an exploration of up to 5 minutes, three agent runs and a page, on a loaded machine
def test_demo_pipeline_and_its_report(tmp_path):
    out = tmp_path / "demo"
    proc = subprocess.run([sys.executable, "-m", "cua.cli", "demo", "--out", str(out), "--minutes", "5",
                           "--max-actions", "400", "--only", "^Search$", "--model", "none"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = out / "index.html"
    assert proc.stdout.strip().splitlines()[-1] == str(page.resolve())
    from playwright.sync_api import sync_playwright

    from cua.env.browser import find_chromium

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page()
        pg.goto(page.as_uri())
        coverage = float(pg.get_attribute("#coverage", "data-value"))
        verified = int(pg.inner_text("#verified"))
        runs = {r.get_attribute("data-task"): (r.get_attribute("data-agent"), r.get_attribute("data-checkers"))
                for r in pg.query_selector_all("tr.run")}
        shot = pg.evaluate("document.querySelector('img').naturalWidth")
        graph = pg.evaluate("""() => { const g = document.querySelector('#graph svg');
            return g ? {nodes: g.querySelectorAll('g.node').length, edges: g.querySelectorAll('g.edge').length,
                        thumbs: [...g.querySelectorAll('g.node image')].filter(i => i.getBBox().width > 0).length,
                        labels: [...g.querySelectorAll('g.edge text')].map(t => t.textContent)} : null; }""")
        posts = {r.query_selector("td").inner_text(): r.query_selector("td.post").inner_text()
                 for r in pg.query_selector_all("tr.skill")}
        browser.close()
    assert coverage > 0 and verified > 0 and shot > 0
    # the explored graph as a picture: thumbnails for states, labelled transitions, laid out by dot
    assert graph and graph["nodes"] >= 2 and graph["edges"] >= 1 and graph["thumbs"] == graph["nodes"]
    assert any(label.startswith("click ") for label in graph["labels"])
    # each verified skill's postcondition in words (an effect, never empty)
    assert posts and all("not verifiable" not in words for name, words in posts.items()
                         if name in {n for n, st, _ in json.loads((out / "demo.json").read_text())["coverage"]
                                     ["skill_names"] if st == "verified"})
    assert runs["covered-unit"] == ("success", "success")
    assert runs["covered-composite"] == ("success", "success")
    assert runs["uncovered"] == ("outside known skills", "success")  # stopped, and mousepad is unchanged
    data = json.loads((out / "demo.json").read_text())
    assert data["model"] == "none" and all(r["ok"] for r in data["runs"])
    for r in data["runs"][:2]:  # each covered run links its own trajectory report
        assert r["report"] and (out / r["report"]).exists()
