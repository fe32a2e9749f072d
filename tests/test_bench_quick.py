"""Every benchmark runs in its --quick mode and writes a result of the shared shape (never a timing check);
the committed full results have that shape too, and the README's table is the one they generate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import _results
from benchmarks._results import check_shape, row

REPO = Path(__file__).resolve().parents[1]
BENCHES = sorted(p for p in (REPO / "benchmarks").glob("*_bench.py"))


@pytest.mark.parametrize("bench", BENCHES, ids=[p.stem for p in BENCHES])
def test_quick_run_writes_a_result(bench, tmp_path):
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(bench), "--quick", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert check_shape(doc) == [], check_shape(doc)
    assert doc["quick"] is True and doc["bench"] in (bench.stem.removesuffix("_bench"), bench.stem)
    assert doc["commit"]["sha"] and doc["machine"]["cores"] >= 1


def test_committed_results_have_the_shape_and_generate_the_readme_table():
    results = sorted((REPO / "bench-results").glob("*.json"))
    for f in results:
        doc = json.loads(f.read_text())
        assert check_shape(doc) == [], (f.name, check_shape(doc))
        assert doc["quick"] is False, f"{f.name} is a --quick run; commit full runs only"
    proc = subprocess.run([sys.executable, "scripts/bench_table.py", "--check"], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_table_script_renders_rows_and_flags_a_stale_readme(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    doc = {"bench": "demo", "quick": False, "commit": {"sha": "0123456789abcdef", "dirty": False},
           "machine": {"cores": 2, "cpu_model": "Test CPU"}, "load_before": [0.5, 0.4, 0.3],
           "load_after": [0.7, 0.5, 0.3], "started": "2026-01-01T00:00:00Z", "seconds": 1.0,
           "summary": [row("latency", 0.25, 1.0, "fixed pause", unit="s")], "results": {}}
    (results / "demo.json").write_text(json.dumps(doc))
    (results / "bad.json").write_text(json.dumps({**doc, "bench": "bad", "quick": True}))  # quick: left out
    readme = tmp_path / "README.md"
    from scripts.bench_table import BEGIN, END

    readme.write_text(f"# x\n{BEGIN}\nold\n{END}\ntail\n")
    run = [sys.executable, "scripts/bench_table.py", "--results", str(results), "--readme", str(readme)]
    assert subprocess.run([*run, "--check"], cwd=REPO, capture_output=True).returncode == 1
    assert subprocess.run(run, cwd=REPO, capture_output=True).returncode == 0
    text = readme.read_text()
    assert "| latency (fixed pause)" not in text and "| latency | 0.25 s | 1 s (fixed pause) | 0.25 |" in text
    assert "01234567, 2 cores, load 0.5→0.7" in text and "bad" not in text and text.endswith("tail\n")
    assert subprocess.run([*run, "--check"], cwd=REPO, capture_output=True).returncode == 0


def test_dirty_means_code_not_results(tmp_path, monkeypatch):
    """A result file written by an earlier benchmark of the same run does not make the next one `dirty`."""
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "bench-results").mkdir()
    (tmp_path / "bench-results" / "a.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(_results, "REPO", tmp_path)
    (tmp_path / "bench-results" / "a.json").write_text('{"new": 1}')
    assert _results.commit()["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert _results.commit()["dirty"] is True
