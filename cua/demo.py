"""`cua demo`: the whole toolkit end to end, offline, on a sandbox mousepad.

1. start a sandbox desktop with mousepad; 2. explore it by GUI-DFS into a skill library;
3. run three natural-language tasks with the agent (skills only, or the configured model):
two the explored skills cover (one composite) and one outside them, which must stop early and
leave mousepad unchanged (cua.demo_tasks); 4. score each with the evaluation checkers on the
app's state; 5. write one HTML page: the explored UI graph (Graphviz), each skill's postcondition
in words, the runs and their trajectories.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer

from cua.demo_graph import GraphError, postconditions_html, render
from cua.demo_tasks import demo_tasks, uncovered_baseline

def configured_model() -> str:
    """The planner the demo uses: a real model when a key is set, else skills only."""
    if os.environ.get("OPENAI_API_KEY"):
        return f"openai:{os.environ.get('CUA_DEMO_MODEL', 'gpt-4o-mini')}"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return f"anthropic:{os.environ.get('CUA_DEMO_MODEL', 'claude-sonnet-4-5')}"
    return "none"


def explore(skills: Path, minutes: float, max_actions: int, only: str | None, log) -> dict[str, Any]:
    """Run `cua explore` (its own progress bar shows) and return its JSON summary."""
    cmd = [sys.executable, "-m", "cua.cli", "explore", "--env", "sandbox:mousepad", "--skills", str(skills),
           "--minutes", str(minutes), "--max-actions", str(max_actions)]
    if only:
        cmd += ["--only", only]
    log(f"$ cua explore --env sandbox:mousepad --skills {skills} --minutes {minutes} --max-actions {max_actions}"
        + (f" --only '{only}'" if only else ""))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=minutes * 60 + 600)
    if proc.returncode != 0:
        raise RuntimeError(f"exploration failed (exit {proc.returncode}); see the messages above")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def coverage(skills: Path) -> dict[str, Any]:
    """States and skills, and menu coverage: the menu items seen while exploring that a verified skill clicks."""
    from skills.graph import UIGraph
    from skills.library import SkillLibrary

    with SkillLibrary(skills) as lib:
        every = lib.list()
    graph = UIGraph(skills)
    try:
        counts = graph.counts()
        seen = {e["signature"] for (els,) in graph.db.execute("SELECT elements FROM states")
                for e in json.loads(els or "[]") if "menu item" in e.get("role", "")}
    finally:
        graph.close()
    clicked = {(st.action.get("target") or {}).get("signature") for s in every if s.status == "verified"
               for st in s.steps}
    return {"states": counts.get("states", 0), "transitions": counts.get("transitions", 0),
            "skills": len(every), "verified": sum(s.status == "verified" for s in every),
            "failed": sum(s.status == "failed" for s in every),
            "composed": sum(s.provenance == "composed" for s in every),
            "menu_items_seen": len(seen), "menu_items_covered": len(seen & clicked),
            "coverage": round(len(seen & clicked) / len(seen), 3) if seen else 0.0,
            "skill_names": [(s.name, s.status, s.provenance) for s in every]}


def run_tasks(skills: Path, model: str, out: Path, log) -> list[dict[str, Any]]:
    """Each demo task on a fresh sandbox through the eval runner: reset, agent, checkers."""
    from cua.env import make_env
    from cua.eval.runner import EvalConfig, run_episode

    cfg = EvalConfig(model=model, skills=str(skills), out=str(out), max_steps=15)
    rows = []
    with make_env("sandbox:mousepad", sources="a11y") as env:
        baseline = uncovered_baseline(env)
        log(f"  uncovered task's 'unchanged' snapshot: {len(baseline['settings'])} settings, "
            f"windows {baseline['windows']}")
        for task in demo_tasks(baseline):
            log(f"$ cua run {task.instruction!r} --env sandbox:mousepad --model {model} --skills {skills}")
            r = run_episode(task, env, cfg)
            uncovered = "uncovered" in task.tags
            expected = "outside known skills, mousepad unchanged" if uncovered else "success"
            ok = (r.agent_outcome == "outside known skills" if uncovered else True) and r.outcome == "success"
            rows.append({"task": task.id, "instruction": task.instruction, "kind": ", ".join(task.tags),
                         "agent_outcome": r.agent_outcome, "checkers": r.outcome, "expected": expected,
                         "ok": ok, "steps": r.steps, "seconds": r.seconds.get("total", 0.0),
                         "report": r.report, "error": r.error, "details": r.details})
            log(f"  -> agent: {r.agent_outcome}; checkers: {r.outcome}; {r.steps} step(s); "
                f"{r.seconds.get('total', 0):.1f}s" + (f" ({r.error})" if r.error else ""))
    return rows


def graph_section(skills: Path, out: Path) -> str:
    """The explored UI graph as an inline SVG laid out by Graphviz, or why it is missing."""
    try:
        svg, counts = render(skills, out)
    except GraphError as e:
        return f'<p id="graph-missing">{html.escape(str(e))}</p>'
    return (f'<p>{counts["nodes"]} states (screenshots), {counts["edges"]} transitions between them '
            f'(labelled with the action), laid out by Graphviz <code>dot</code>; '
            f'<a href="graph/ui.svg">full size</a>, source graph/ui.dot.</p>'
            f'<div id="graph" data-nodes="{counts["nodes"]}" data-edges="{counts["edges"]}" '
            f'style="border:1px solid #ccc">{svg}</div>')


def write_page(out: Path, model: str, explored: dict, cov: dict, rows: list[dict], shot: str,
               skills: Path) -> Path:
    def link(p: str | None) -> str:
        return f'<a href="{html.escape(os.path.relpath(p, out))}">report</a>' if p else ""

    trs = "".join(
        f'<tr class="run" data-task="{r["task"]}" data-agent="{html.escape(str(r["agent_outcome"]))}" '
        f'data-checkers="{r["checkers"]}" data-ok="{str(r["ok"]).lower()}"><td>{html.escape(r["instruction"])}</td>'
        f'<td>{r["kind"]}</td><td>{html.escape(str(r["agent_outcome"]))}</td><td>{r["checkers"]}</td>'
        f'<td>{"✔" if r["ok"] else "✘"} (expected {html.escape(r["expected"])})</td><td>{r["steps"]}</td>'
        f'<td>{r["seconds"]:.1f}</td><td>{link(r["report"])}</td></tr>' for r in rows)
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>cua demo</title><style>
body{{font:14px system-ui,sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}img{{max-width:32em;border:1px solid #999}}
#graph svg{{width:100%;height:auto}}</style></head>
<body><h1>cua demo: mousepad, explored and operated offline</h1>
<p>Planner: <b id="model">{html.escape(model)}</b>{" (skills only: no language model)" if model == "none" else ""}</p>
<h2>1. Sandbox desktop</h2><img src="{shot}" alt="mousepad in the sandbox">
<h2>2. Exploration (GUI-DFS)</h2>
<p>states <b id="states">{cov['states']}</b>, transitions {cov['transitions']}, skills <b id="skills">{cov['skills']}</b>
(verified <b id="verified">{cov['verified']}</b>, failed {cov['failed']}, composed <b id="composed">{cov['composed']}</b>),
menu coverage <b id="coverage" data-value="{cov['coverage']}">{cov['coverage'] * 100:.0f}%</b>
({cov['menu_items_covered']} of the {cov['menu_items_seen']} menu items seen are clicked by a verified skill),
{explored.get('explore_actions', 0)} exploratory actions, {explored.get('resets', 0)} resets,
{explored.get('seconds', 0)} s{(' (stopped: ' + html.escape(str(explored.get('stopped'))) + ')') if explored.get('stopped') else ''}.</p>
<h3>The explored UI graph</h3>{graph_section(skills, out)}
<h3>Skills and their postconditions</h3>{postconditions_html(skills)}
<h2>3–4. Tasks, scored by the evaluation checkers</h2>
<table><tr><th>task</th><th>kind</th><th>agent outcome</th><th>checkers</th><th>as expected</th><th>steps</th>
<th>seconds</th><th>trajectory</th></tr>{trs}</table>
<p id="score" data-ok="{sum(r['ok'] for r in rows)}" data-total="{len(rows)}">{sum(r['ok'] for r in rows)}/{len(rows)} as expected.</p>
</body></html>"""
    path = out / "index.html"
    path.write_text(page)
    return path


def run_demo(out: Path, minutes: float, max_actions: int, only: str | None, model: str | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    from cua.env import make_env

    console = Console(stderr=True)
    out.mkdir(parents=True, exist_ok=True)
    skills = out / "skills.db"
    model = model or configured_model()
    t0 = time.monotonic()

    def stage(n: int, text: str) -> None:
        console.rule(f"[bold]{n}/5 {text}[/]  ({time.monotonic() - t0:.0f}s)")

    console.print(f"planner: [bold]{model}[/]" + ("  (no model key set: skills only)" if model == "none"
                                                   else "  (a model key is set: the model plans)"))
    stage(1, "sandbox desktop with mousepad")
    with make_env("sandbox:mousepad", sources="a11y") as env:
        obs = env.observe()
        obs.image().save(out / "sandbox.png")
        console.print(f"display {getattr(getattr(env, 'sandbox', None), 'display', '?')}: {obs.window_title!r}, "
                      f"{len(obs.elements)} accessible elements")
    stage(2, "GUI-DFS exploration into a skill library")
    explored = explore(skills, minutes, max_actions, only, console.print)
    cov = coverage(skills)
    console.print(f"states {cov['states']} · skills {cov['skills']} (verified {cov['verified']}, "
                  f"composed {cov['composed']}) · coverage {cov['coverage']:.0%}")
    stage(3, "three tasks through the agent (`cua run`)")
    rows = run_tasks(skills, model, out / "runs", console.print)
    stage(4, "scores from the evaluation checkers")
    table = Table(title="cua demo")
    for c in ("task", "kind", "agent outcome", "checkers", "as expected", "steps", "s"):
        table.add_column(c)
    for r in rows:
        table.add_row(r["instruction"], r["kind"], str(r["agent_outcome"]), r["checkers"],
                      "[green]yes[/]" if r["ok"] else "[red]no[/]", str(r["steps"]), f"{r['seconds']:.1f}")
    stage(5, "report")
    page = write_page(out, model, explored, cov, rows, "sandbox.png", skills)
    (out / "demo.json").write_text(json.dumps({"model": model, "exploration": explored, "coverage": cov,
                                               "runs": rows, "seconds": round(time.monotonic() - t0, 1)}, indent=1))
    Console().print(table)
    console.print(f"exploration: {cov['states']} states, {cov['skills']} skills, coverage {cov['coverage']:.0%}; "
                  f"total {time.monotonic() - t0:.0f}s")
    print(page.resolve())
    return 0 if all(r["ok"] for r in rows) else 1


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        out: Path = typer.Option(Path("demo-out"), "--out", "-o", help="Where the library, runs and page go."),
        minutes: float = typer.Option(4.0, help="Exploration budget (wall clock)."),
        max_actions: int = typer.Option(400, help="Exploration budget (every action: exploring, going back, verifying, "
                                        "the probes that reopen a menu to read a check mark)."),
        only: str = typer.Option("^(Search|View|Help)$", help="Regex of the start-state controls to explore "
                                                               "('' explores everything)."),
        model: str = typer.Option(None, help="Planner: none | openai:M | anthropic:M (default: from the keys set)."),
    ) -> None:
        """The end-to-end offline demo: sandbox, exploration, three agent runs, checkers, one HTML page.

        Example: cua demo --out demo-out
        """
        raise typer.Exit(run_demo(out, minutes, max_actions, only or None, model))
