"""`cua eval`: run task suites (agent or replay), in parallel locally or on Ray, and report."""

from __future__ import annotations

from pathlib import Path

import typer

from cua.cli.common import fail
from cua.cli.model_options import (ALLOW_JS_OPT, ALLOW_URL_OPT, COMPUTER_TOOL_OPT, GROUNDER_OPT, GUI_FAMILY_OPT,
                                    KEEP_IMAGES_OPT, MODEL_OPT, NO_THREAD_OPT, UPLOAD_DIR_OPT, model_options)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        tasks: list[str] = typer.Argument(None, help="Task files/dirs (OSWorld's evaluation_examples/ too), or "
                                          "miniwob:NAME[,NAME] / miniwob:all."),
        index: Path = typer.Option(None, "--index", help="OSWorld index (test_all.json) of the tasks to run."),
        domains: str = typer.Option(None, "--domains", help="With --index: comma list of domains, e.g. chrome,os."),
        assets: Path = typer.Option(None, "--assets", help="OSWorld asset cache (cua osworld assets --fetch)."),
        online: bool = typer.Option(False, "--online", help="The internet is reachable: also run OSWorld tasks "
                                    "that open live websites or install packages (skipped otherwise)."),
        strict_metrics: bool = typer.Option(False, "--strict-metrics", help="Score OSWorld tasks with the reference's "
                                            "known metric bugs fixed (docs/osworld_metrics.md); default: as OSWorld."),
        env: str = typer.Option(None, "--env", "-e", help="ENV overriding each task's own env."),
        model: str = MODEL_OPT,
        skills: Path = typer.Option(None, help="Skill library (SQLite) for the agent."),
        replay: str = typer.Option(None, help="'reference' (each task's scripted reference) or a DIR of "
                                               "<task_id>/ recordings, instead of the agent."),
        workers: int = typer.Option(1, min=1, help="Parallel episodes, each with its own environment."),
        ray: str = typer.Option(None, help="Run on Ray: 'auto' (a running cluster, else a local one) or ADDR."),
        out: Path = typer.Option(Path("eval-out"), "--out", "-o", help="Results dir (resumes if it exists)."),
        seeds: int = typer.Option(1, min=1, help="Seeds per MiniWoB++ page."),
        max_steps: int = typer.Option(None, min=0, help="Override each task's step budget; 0: set-up and "
                                      "evaluator only (no agent)."),
        sources: str = typer.Option("auto", help="Perception sources for the env: auto or a11y,dom,ocr,vision."),
        computer_tool: str = COMPUTER_TOOL_OPT,
        no_thread: bool = NO_THREAD_OPT,
        keep_images: int = KEEP_IMAGES_OPT,
        grounder: str = GROUNDER_OPT,
        allow_js: bool = ALLOW_JS_OPT,
        upload_dir: Path | None = UPLOAD_DIR_OPT,
        allow_url: list[str] = ALLOW_URL_OPT,
        gui_family: str = GUI_FAMILY_OPT,
        live: bool = typer.Option(False, "--live", help="Serve a live view (noVNC, token) of the episodes' desktop "
                                  "(needs --env, one worker, no Ray); its panel shows the task count and outcomes."),
    ) -> None:
        """Evaluate tasks and write results.jsonl + report.html.

        Example: cua eval tasks/mousepad --env sandbox:mousepad --replay reference --workers 2 --out r
        """
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.table import Table

        import json

        from cua.eval.report import write_report
        from cua.eval.runner import EvalConfig, finished_ids, run_eval
        from cua.eval.task import TaskError, osworld_index_tasks, resolve_tasks

        console = Console(stderr=True)
        options = model_options(model, computer_tool, no_thread, keep_images, grounder, allow_js, upload_dir,
                                allow_url, gui_family)
        try:
            todo = resolve_tasks(tasks or [], seeds)
            if index:
                todo += osworld_index_tasks(index, [d.strip() for d in domains.split(",")] if domains else None)
            if not todo:
                raise TaskError("no tasks: give task files/dirs or --index FILE")
        except TaskError as e:
            fail(str(e), code=2)
        cfg = EvalConfig(env=env, model=model, skills=str(skills) if skills else None, replay=replay,
                         out=str(out), max_steps=max_steps, env_options={"sources": sources},
                         model_options=options, grounder=grounder,
                         assets=str(assets.resolve()) if assets else None, online=online,
                         strict_metrics=strict_metrics)
        skip = finished_ids(out / "results.jsonl")
        if skip & {t.id for t in todo}:
            console.print(f"resuming: {len(skip & {t.id for t in todo})} task(s) already done in {out}")
        view = _eval_view(live, env, workers, ray, sources, console)
        cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with view, Progress(*cols, console=console) as bar:
            job = bar.add_task("episodes", total=len([t for t in todo if t.id not in skip]))
            seen = {"done": 0, "success": 0, "total": len([t for t in todo if t.id not in skip])}

            def tick(r) -> None:
                bar.advance(job)
                bar.console.print(f"{r.task_id}: {r.outcome}" + (f" ({r.error})" if r.error else ""))
                seen["done"] += 1
                seen["success"] += r.outcome == "success"
                view.update(step=seen["done"], doing=f"{r.task_id}: {r.outcome}", outcome=f"{seen['success']}/"
                            f"{seen['done']} passed of {seen['total']}", note=r.error or "")

            run_eval(todo, cfg, workers=workers, ray=ray, on_result=tick)
        report = write_report(out)
        s = json.loads((out / "summary.json").read_text())  # what the report shows
        table = Table(title=f"cua eval: {s['success']}/{s['tasks']} passed")
        for c in ("success rate", "95% CI", "failures", "errors", "skipped", "median s", "steps", "cost $"):
            table.add_column(c)
        table.add_row(f"{s['success_rate']:.1%}", f"{s['ci95'][0]:.0%}–{s['ci95'][1]:.0%}", str(s["failure"]),
                      str(s["error"]), str(s.get("skipped", 0)), f"{s['median_seconds']:.2f}", str(s["total_steps"]), f"{s['total_cost']:.4f}")
        Console().print(table)
        print(report)


def _eval_view(live: bool, env: str | None, workers: int, ray: str | None, sources: str, console: object):
    """The live view for `cua eval --live`: on the one env the in-process runner will reuse for every episode."""
    from cua.liveview import NoView, open_live

    if not live:
        return NoView()
    if not env or workers > 1 or ray:
        fail("--live shows one desktop: give --env ENV and run one worker without --ray", code=2)
    from cua.env import EnvError
    from cua.eval.runner import _worker_env  # the runner's per-worker env cache: it reuses this env

    try:
        return open_live(_worker_env(env, {"sources": sources}), say=console.print)  # type: ignore[attr-defined]
    except EnvError as e:
        fail(str(e), code=2)
