"""Our OSWorld metrics agree with the reference (desktop-env) on every golden case, and every metric
that OSWorld's Linux task set uses has golden cases (>= 3)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from cua.eval.osworld.metrics import METRICS

HERE = Path(__file__).parent
GOLDEN = HERE / "golden.jsonl"
INPUTS = HERE / "golden_inputs"
TASKS = HERE.parents[1] / "tasks" / "osworld"  # OSWorld's evaluation_examples, vendored
AGENT_VERDICT = {"infeasible"}  # scored from the agent's last action, not from files

_lines = GOLDEN.read_text().splitlines()
HEADER = json.loads(_lines[0])
RECORDS = [json.loads(line) for line in _lines[1:]]


def _resolve(value, base: Path):
    if isinstance(value, str) and value.startswith("@/"):
        return str(base / value[2:])
    if isinstance(value, list):
        return [_resolve(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, base) for k, v in value.items()}
    return value


def _ours(rec):
    fn = METRICS[rec["metric"]]
    base = INPUTS / rec["id"]
    try:
        out = fn(*_resolve(rec["args"], base), **_resolve(rec["options"], base))
    except Exception as e:
        return {"raises": type(e).__name__}
    if out is None:
        return None
    out = float(out)
    return {"nan": True} if math.isnan(out) else out


def _agree(ours, ref) -> bool:
    if isinstance(ref, float) and isinstance(ours, float):
        return math.isclose(ours, ref, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(ref, dict) and "raises" in ref:
        return isinstance(ours, dict) and "raises" in ours
    return ours == ref


def test_golden_header_names_the_reference():
    assert HEADER["reference"].startswith("desktop-env ")


@pytest.mark.parametrize("rec", RECORDS, ids=[r["id"] for r in RECORDS])
def test_metric_agrees_with_reference(rec):
    assert rec["metric"] in METRICS, f"no implementation of {rec['metric']}"
    ours = _ours(rec)
    assert _agree(ours, rec["verdict"]), f"{rec['id']}: ours {ours!r}, reference {rec['verdict']!r}"


def used_metrics() -> Counter:
    """Metric name -> number of tasks in OSWorld's test_all.json whose evaluator uses it."""
    index = json.loads((TASKS / "test_all.json").read_text())
    used: Counter = Counter()
    for domain, ids in index.items():
        for task_id in ids:
            func = json.loads((TASKS / "examples" / domain / f"{task_id}.json").read_text())["evaluator"]["func"]
            used.update(set(func if isinstance(func, list) else [func]))
    return used


def test_every_used_metric_is_implemented_with_golden_cases():
    used = used_metrics()
    assert len(used) > 100  # the 369 Linux tasks use 111 metric functions
    missing = sorted(m for m in used if m not in METRICS and m not in AGENT_VERDICT)
    assert not missing, f"metrics used by OSWorld's tasks without an implementation: {missing}"
    counts = Counter(r["metric"] for r in RECORDS)
    lacking = sorted(m for m in used if m not in AGENT_VERDICT and counts[m] < 3)
    assert not lacking, f"{len(lacking)} metrics used by OSWorld's tasks lack 3 golden cases: {lacking}"

