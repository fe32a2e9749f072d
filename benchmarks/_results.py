"""One shape for every benchmark's JSON: what was measured, where, on which commit, how busy the machine was.

A benchmark wraps its run in `BenchRun(name, quick)` and ends with `run.write(results, summary)`:

    bench-results/<name>.json        (full run; what `make bench` writes and the README table reads)
    bench-results/quick/<name>.json  (--quick: a smoke run `make test` does; never in the README)

`summary` is the benchmark's headline: a list of rows {metric, value, baseline, ratio, unit, note}, each
with the baseline measured in the same run. `scripts/bench_table.py` builds the README table from them.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench-results"


class Row(BaseModel):
    """One headline number and the baseline it is compared with (measured in the same run)."""

    metric: str
    value: float | int | str | None
    baseline: float | int | str | None = None
    baseline_name: str = ""
    ratio: float | None = Field(None, description="value / baseline, when both are numbers")
    unit: str = ""
    note: str = ""


def row(metric: str, value: Any, baseline: Any = None, baseline_name: str = "", unit: str = "",
        note: str = "", digits: int = 3) -> dict[str, Any]:
    """A summary row; the ratio is computed here (value / baseline) so no benchmark types one."""
    def r(v: Any) -> Any:
        return round(float(v), digits) if isinstance(v, float) else v
    ratio = None
    if isinstance(value, (int, float)) and isinstance(baseline, (int, float)) and baseline:
        ratio = round(float(value) / float(baseline), 3)
    return Row(metric=metric, value=r(value), baseline=r(baseline), baseline_name=baseline_name, ratio=ratio,
               unit=unit, note=note).model_dump()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """Cores this process may use, CPU model, memory: enough to judge whether two runs compare."""
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {"cores": len(os.sched_getaffinity(0)), "cpu_model": cpu_model(), "mem_gib": mem,
            "kernel": platform.release(), "python": platform.python_version()}


def commit() -> dict[str, Any]:
    """The commit measured, and whether tracked files other than bench-results/ had uncommitted changes."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    # results files are left out: a run of several benchmarks writes them one after another
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench-results")
    return {"sha": git("rev-parse", "HEAD") or None, "dirty": bool(dirty)}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class BenchRun:
    """Records the context of one benchmark run; `write` puts it next to the results."""

    def __init__(self, name: str, quick: bool, out: Path | str | None = None):
        self.name, self.quick = name, quick
        self.out = Path(out) if out else (RESULTS / "quick" if quick else RESULTS) / f"{name}.json"
        self.started = time.time()
        self.t0 = time.monotonic()
        self.load_before = load()
        self.commit = commit()  # at the start: a commit made while a long run goes on is not what it measured

    def write(self, results: dict[str, Any], summary: list[dict[str, Any]]) -> Path:
        for s in summary:
            Row.model_validate(s)
        doc = {"bench": self.name, "quick": self.quick, "commit": self.commit, "machine": machine(),
               "load_before": self.load_before, "load_after": load(),
               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
               "seconds": round(time.monotonic() - self.t0, 1), "summary": summary, "results": results}
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
        return self.out


REQUIRED = {"bench": str, "quick": bool, "commit": dict, "machine": dict, "load_before": list, "load_after": list,
            "started": str, "seconds": (int, float), "summary": list, "results": dict}


def check_shape(doc: dict[str, Any]) -> list[str]:
    """Problems with a result document's shape (empty list: fine). Used by the tests and the table script."""
    bad = [f"{k}: missing or not {t}" for k, t in REQUIRED.items() if not isinstance(doc.get(k), t)]
    if not bad:
        if not doc["summary"]:
            bad.append("summary: empty")
        for i, s in enumerate(doc["summary"]):
            try:
                Row.model_validate(s)
            except ValueError as e:
                bad.append(f"summary[{i}]: {e}")
        if not {"cores", "cpu_model"} <= set(doc["machine"]):
            bad.append("machine: needs cores and cpu_model")
        if len(doc["load_before"]) != 3 or len(doc["load_after"]) != 3:
            bad.append("load_before/load_after: three load averages each")
    return bad
