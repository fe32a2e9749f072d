"""A self-contained HTML report of a trajectory directory (images inlined; opens offline).

Shows the task, outcome and budgets used, then each step: its set-of-mark frame with the action's
point marked, the planner text, the action, its result and timings. Agent runs, recordings and
evaluation replays all call `write_report(traj_dir)`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import time
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from cua.trajectory import Step, Trajectory

MAX_WIDTH = 960
CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fafafa}
h1{font-size:20px}table.meta td{padding:2px 10px 2px 0;vertical-align:top}
.step{background:#fff;border:1px solid #ddd;border-radius:6px;margin:14px 0;padding:12px;display:flex;gap:16px}
.step img{max-width:640px;border:1px solid #ccc}.info{flex:1;min-width:280px}
.ok{color:#176c2f}.bad{color:#b00020}pre{white-space:pre-wrap;background:#f3f3f3;padding:6px;margin:4px 0}
.badge{font-weight:bold;padding:2px 8px;border-radius:4px;background:#eee}"""


def _b64(img: Image.Image) -> str:
    img = img.convert("RGB")
    if img.width > MAX_WIDTH:
        img = img.resize((MAX_WIDTH, round(img.height * MAX_WIDTH / img.width)), Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


def _som_frame(img: Image.Image, elements: list[dict[str, Any]] | None, point: Any) -> Image.Image:
    """The frame with numbered element boxes (perception's renderer when present) and the action point."""
    if elements:
        try:
            from cua.perception.elements import Observation, UIElement
            from cua.perception.som import render_som

            els = [UIElement(id=e["id"], role=e.get("role", "unknown"), name=e.get("name", ""),
                             bbox=tuple(e["bbox"]), source=e.get("source", "ocr")) for e in elements]
            img = render_som(Observation(screenshot=img, elements=els, size=img.size))
        except ImportError:
            img = img.convert("RGB").copy()
            draw = ImageDraw.Draw(img)
            for e in elements:
                x, y, w, h = e["bbox"]
                draw.rectangle([x, y, x + w, y + h], outline=(255, 0, 80), width=1)
                draw.text((x + 2, y), str(e["id"]).lstrip("e"), fill=(255, 0, 80))
    if point:
        img = img.convert("RGB").copy() if img.mode != "RGB" else img
        draw = ImageDraw.Draw(img)
        x, y = point
        draw.ellipse([x - 12, y - 12, x + 12, y + 12], outline=(255, 140, 0), width=4)
        draw.line([x - 18, y, x + 18, y], fill=(255, 140, 0), width=2)
        draw.line([x, y - 18, x, y + 18], fill=(255, 140, 0), width=2)
    return img


def _action_text(action: dict[str, Any] | None) -> str:
    if not action:
        return "(none)"
    try:
        from cua.actions import action_from_dict

        return action_from_dict(action).to_call()
    except Exception:  # noqa: BLE001 - not an executable action (e.g. a stop record): show JSON
        return json.dumps(action)


def _step_html(traj: Trajectory, step: Step, elements_by_frame: dict[str, Any]) -> str:
    img_html = "<div><i>no frame</i></div>"
    if step.frame and (traj.dir / step.frame).exists():
        els = step.extra.get("elements") or elements_by_frame.get(step.frame)
        point = (step.result or {}).get("point")
        with Image.open(traj.dir / step.frame) as im:
            img_html = f'<img alt="step {step.index} frame" src="{_b64(_som_frame(im, els, point))}">'
        if step.extra.get("frame_reused"):
            img_html = (f'<div>{img_html}<div><i>screen as planned (not observed again before this '
                        f'keyboard step)</i></div></div>')
    res = step.result or {}
    status = ('<span class="ok">ok</span>' if res.get("ok", True) else
              f'<span class="bad">failed: {html.escape(str(res.get("error")))}</span>') if step.result else ""
    timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in step.timings.items())
    extra = {k: v for k, v in step.extra.items() if k not in ("elements", "window_title", "frame_reused")}
    extra_html = f"<pre>{html.escape(json.dumps(extra, indent=1)[:2000])}</pre>" if extra else ""
    return (f'<div class="step" id="step-{step.index}">{img_html}<div class="info">'
            f"<h3>Step {step.index + 1}</h3>"
            f"<div><b>Action:</b> <code class=\"action\">{html.escape(_action_text(step.action))}</code> {status}</div>"
            f"<div><b>Planner:</b><pre class=\"planner\">{html.escape(step.planner_text or '-')}</pre></div>"
            f"<div><b>Timing:</b> {html.escape(timings or '-')}</div>{extra_html}</div></div>")


def write_report(traj_dir: Path | str, out: Path | str | None = None) -> Path:
    """Write `report.html` (self-contained) for the trajectory in `traj_dir`; returns its path."""
    traj = Trajectory(traj_dir)
    meta = traj.meta
    steps = list(traj.steps())
    elements_by_frame = {s.frame: s.extra["elements"] for s in steps if s.frame and s.extra.get("elements")}
    duration = f"{meta.ended - meta.started:.1f} s" if meta.ended else "unfinished"
    extra = meta.extra
    rows = [("Task", meta.task), ("Outcome", meta.outcome or "unfinished"), ("Message", extra.get("message", "")),
            ("Environment", meta.env), ("Model", meta.model), ("Source", meta.source),
            ("Started", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(meta.started))), ("Duration", duration),
            ("Steps", str(len(steps))), ("Model cost", f"${extra.get('cost', 0):.4f}"),
            ("Model usage", json.dumps(extra.get("usage", {})))]
    if extra.get("nearest_skills"):
        rows.append(("Nearest skills", ", ".join(f"{s['name']} ({s['status']})" for s in extra["nearest_skills"])))
    meta_html = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td class=\"{k.lower().replace(' ', '-')}\">"
                        f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    body = "".join(_step_html(traj, s, elements_by_frame) for s in steps) or "<p>No steps were recorded.</p>"
    page = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>cua run: {html.escape(meta.task[:80])}"
            f"</title><style>{CSS}</style></head><body><h1>{html.escape(meta.task)}</h1>"
            f"<p>Outcome: <span class=\"badge\" id=\"outcome\">{html.escape(meta.outcome or 'unfinished')}</span></p>"
            f"<table class=\"meta\">{meta_html}</table><h2>Steps</h2>{body}</body></html>")
    path = Path(out) if out is not None else traj.dir / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
