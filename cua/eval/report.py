"""Eval report: results.jsonl -> one self-contained report.html (rates with CIs, per-task table, plots)."""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path
from statistics import median

from cua.eval.runner import EpisodeResult

COLORS = {"success": "#2e7d32", "failure": "#c62828", "error": "#ef6c00", "skipped": "#757575"}


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for k successes out of n."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def load_results(path: Path) -> list[EpisodeResult]:
    """Last result per task id (a resumed eval may have re-run one)."""
    by_id: dict[str, EpisodeResult] = {}
    for line in path.read_text().splitlines():
        try:
            r = EpisodeResult.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValueError):
            continue
        by_id[r.task_id] = r
    return list(by_id.values())


def summarize(results: list[EpisodeResult]) -> dict:
    """Rates over the tasks that ran; skipped ones (cannot run here: an app, an asset) are counted apart."""
    skipped = sum(r.outcome == "skipped" for r in results)
    results = [r for r in results if r.outcome != "skipped"]
    n = len(results)
    k = sum(r.outcome == "success" for r in results)
    lo, hi = wilson(k, n)
    eff = [r.reference_seconds / r.seconds["act"] for r in results
           if r.outcome == "success" and r.reference_seconds and r.seconds.get("act")]
    return {
        "tasks": n, "success": k, "failure": sum(r.outcome == "failure" for r in results),
        "error": sum(r.outcome == "error" for r in results), "skipped": skipped,
        "success_rate": round(k / n, 4) if n else 0.0, "ci95": [round(lo, 4), round(hi, 4)],
        "median_seconds": round(median([r.seconds.get("total", 0) for r in results]), 3) if n else 0.0,
        "total_steps": sum(r.steps for r in results), "total_cost": round(sum(r.cost for r in results), 6),
        "median_efficiency": round(median(eff), 3) if eff else None,
    }


def _bars(results: list[EpisodeResult], width: int = 640) -> str:
    """Inline SVG: one horizontal bar per task, length = total seconds, colour = outcome."""
    if not results:
        return ""
    top = max(r.seconds.get("total", 0) for r in results) or 1
    rows = []
    for i, r in enumerate(results):
        w = max(2, int((width - 220) * r.seconds.get("total", 0) / top))
        y = i * 18
        rows.append(f'<text x="0" y="{y + 12}" font-size="11">{html.escape(r.task_id[:32])}</text>'
                    f'<rect x="210" y="{y + 2}" width="{w}" height="12" fill="{COLORS.get(r.outcome, "#777")}"/>'
                    f'<text x="{214 + w}" y="{y + 12}" font-size="10">{r.seconds.get("total", 0):.1f}s</text>')
    return f'<svg width="{width}" height="{len(results) * 18 + 4}" role="img" aria-label="time per task">{"".join(rows)}</svg>'


def write_report(out_dir: Path | str) -> Path:
    out = Path(out_dir)
    results = load_results(out / "results.jsonl")
    s = summarize(results)
    (out / "summary.json").write_text(json.dumps(s, indent=1))
    rows = []
    for r in results:
        link = ""
        if r.report:
            rel = os.path.relpath(r.report, out)
            link = f'<a href="{html.escape(rel)}">trajectory</a>'
        eff = (f"{r.reference_seconds / r.seconds['act']:.2f}x" if r.outcome == "success" and r.reference_seconds
               and r.seconds.get("act") else "")
        rows.append(
            f'<tr class="task" data-task="{html.escape(r.task_id)}" data-outcome="{r.outcome}" data-steps="{r.steps}">'
            f'<td>{html.escape(r.task_id)}</td><td style="color:{COLORS.get(r.outcome, "#000")}">{r.outcome}</td>'
            f'<td>{html.escape(r.agent_outcome or "")}</td><td class="steps">{r.steps}</td>'
            f'<td class="secs">{r.seconds.get("total", 0):.2f}</td><td>{r.cost:.4f}</td><td>{eff}</td>'
            f'<td>{html.escape(r.error or "; ".join(r.details))[:300]}</td><td>{link}</td></tr>')
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>cua eval report</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}}.big{{font-size:20px}}</style></head>
<body><h1>cua eval report</h1>
<p class="big">Success rate <b id="success-rate" data-value="{s['success_rate']}">{s['success_rate'] * 100:.1f}%</b>
({s['success']}/{s['tasks']}; 95% CI <span id="ci" data-lo="{s['ci95'][0]}" data-hi="{s['ci95'][1]}">
{s['ci95'][0] * 100:.1f}–{s['ci95'][1] * 100:.1f}%</span>)</p>
<p>failures <b id="failures">{s['failure']}</b>, errors <b id="errors">{s['error']}</b>,
median time <b id="median-seconds">{s['median_seconds']:.2f}</b> s, steps <b id="total-steps">{s['total_steps']}</b>,
model cost $<b id="total-cost">{s['total_cost']:.4f}</b>,
median efficiency vs human reference <b id="efficiency">{s['median_efficiency'] or '–'}</b></p>
<h2>Time per task</h2>{_bars(results)}
<h2>Tasks</h2><table><tr><th>task</th><th>outcome</th><th>agent</th><th>steps</th><th>seconds</th><th>cost $</th>
<th>efficiency</th><th>details</th><th>trajectory</th></tr>{''.join(rows)}</table></body></html>"""
    path = out / "report.html"
    path.write_text(page)
    return path
