"""`cua eval`: run task suites (agent or replay), in parallel locally or on Ray, and report."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        tasks: list[str] = typer.Argument(..., help="Task files/dirs, or miniwob:NAME[,NAME] / miniwob:all."),
        env: str = typer.Option(None, "--env", "-e", help="ENV overriding each task's own env."),
        model: str = typer.Option("none", help="Planner model: none | openai:M | anthropic:M | scripted:FILE."),
        skills: Path = typer.Option(None, help="Skill library (SQLite) for the agent."),
        replay: str = typer.Option(None, help="'reference' (each task's scripted reference) or a DIR of "
                                               "<task_id>/ recordings, instead of the agent."),
        workers: int = typer.Option(1, min=1, help="Parallel episodes, each with its own environment."),
        ray: str = typer.Option(None, help="Run on Ray: 'auto' (a running cluster, else a local one) or ADDR."),
        out: Path = typer.Option(Path("eval-out"), "--out", "-o", help="Results dir (resumes if it exists)."),
        seeds: int = typer.Option(1, min=1, help="Seeds per MiniWoB++ page."),
        max_steps: int = typer.Option(None, help="Override each task's step budget."),
        sources: str = typer.Option("auto", help="Perception sources for the env: auto or a11y,dom,ocr,vision."),
        computer_tool: str = typer.Option("auto", "--computer-tool", help="Computer-use protocol version: auto "
                                          "or e.g. computer, computer_use_preview (README: Models)."),
        no_thread: bool = typer.Option(False, "--no-thread", help="Resend the conversation each turn instead "
                                       "of chaining it on the server."),
        keep_images: int = typer.Option(3, "--keep-images", min=1, help="Screenshots kept in a resent conversation."),
        grounder: str = typer.Option("perception", "--grounder", help="perception (ours) or openai:MODEL: turns a "
                                     "planner's described targets into points."),
        allow_js: bool = typer.Option(False, "--allow-js", help="Anthropic browser toolset: offer javascript_exec "
                                      "(each call still confirmed; --yes approves)."),
        upload_dir: Path | None = typer.Option(None, "--upload-dir", help="Anthropic browser toolset: the one "
                                               "directory file uploads may read from (none without it)."),
        allow_url: list[str] = typer.Option([], "--allow-url", help="Anthropic browser toolset: a URL prefix "
                                            "navigation may reach besides the start page's site (repeatable)."),
        gui_family: str = typer.Option("auto", "--gui-family", help="Open GUI model family of openai:MODEL "
                                       "(auto: from the name)."),
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
        from cua.eval.task import TaskError, resolve_tasks
        from cua.models.base import ModelError, parse_model_spec
        from cua.models.protocols import choose

        console = Console(stderr=True)
        try:
            todo = resolve_tasks(tasks, seeds)
            kind, name = parse_model_spec(model)
            if kind in ("openai", "anthropic"):
                choose(kind, name, computer_tool)
            from cua.models.grounder import make_grounder
            from cua.models.gui_families import family_for

            make_grounder(grounder)
            family_for("", gui_family)
        except (TaskError, ValueError, ModelError) as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(2) from None
        cfg = EvalConfig(env=env, model=model, skills=str(skills) if skills else None, replay=replay,
                         out=str(out), max_steps=max_steps, env_options={"sources": sources},
                         model_options={"computer_tool": computer_tool, "thread": not no_thread,
                                        "keep_images": keep_images, "gui_family": gui_family, "allow_js": allow_js,
                                        "upload_dir": str(upload_dir) if upload_dir else None,
                                        "allow_urls": allow_url}, grounder=grounder)
        skip = finished_ids(out / "results.jsonl")
        if skip & {t.id for t in todo}:
            console.print(f"resuming: {len(skip & {t.id for t in todo})} task(s) already done in {out}")
        cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*cols, console=console) as bar:
            job = bar.add_task("episodes", total=len([t for t in todo if t.id not in skip]))

            def tick(r) -> None:
                bar.advance(job)
                bar.console.print(f"{r.task_id}: {r.outcome}" + (f" ({r.error})" if r.error else ""))

            run_eval(todo, cfg, workers=workers, ray=ray, on_result=tick)
        report = write_report(out)
        s = json.loads((out / "summary.json").read_text())  # what the report shows
        table = Table(title=f"cua eval: {s['success']}/{s['tasks']} passed")
        for c in ("success rate", "95% CI", "failures", "errors", "median s", "steps", "cost $"):
            table.add_column(c)
        table.add_row(f"{s['success_rate']:.1%}", f"{s['ci95'][0]:.0%}–{s['ci95'][1]:.0%}", str(s["failure"]),
                      str(s["error"]), f"{s['median_seconds']:.2f}", str(s["total_steps"]), f"{s['total_cost']:.4f}")
        Console().print(table)
        print(report)
