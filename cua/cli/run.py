"""`cua run`: one task, end to end, with budgets, confirmations and a trajectory + report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from cua.cli.model_options import (ALLOW_JS_OPT, ALLOW_URL_OPT, COMPUTER_TOOL_OPT, GROUNDER_OPT, GUI_FAMILY_OPT,
                                    KEEP_IMAGES_OPT, MODEL_OPT, NO_THREAD_OPT, UPLOAD_DIR_OPT, model_options)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(
        task: str = typer.Argument(..., help="What to do, in words. Quote skill arguments: type \"hello\"."),
        env: str = typer.Option("sandbox:mousepad", "--env", "-e",
                                help="sandbox:APP | desktop | browser:URL | remote:URL"),
        model: str = MODEL_OPT,
        skills: Path | None = typer.Option(None, "--skills", "-s", help="Skill library (SQLite) to plan with."),
        max_steps: int = typer.Option(30, "--max-steps", min=1, help="Most actions the run may execute."),
        max_seconds: float | None = typer.Option(None, "--max-seconds", help="Wall-time budget in seconds."),
        max_cost: float | None = typer.Option(None, "--max-cost", help="Model cost budget in USD."),
        out: Path | None = typer.Option(None, "--out", "-o", help="Trajectory directory (default runs/DATE-TASK)."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Allow destructive actions without asking."),
        allow_file_urls: bool = typer.Option(False, "--allow-file-urls", help="Let goto open file://, chrome:// "
                                             "and other local URLs (refused by default)."),
        mode: str = typer.Option("auto", "--mode", help="auto | plan (whole plan per call) | step (one action)"),
        sources: str = typer.Option("auto", "--sources", help="Perception sources: a11y,dom,ocr,vision or auto."),
        stop_hotkey: str | None = typer.Option(
            None, "--stop-hotkey", help="Global emergency-stop hotkey (pynput syntax); default "
            "<ctrl>+<alt>+<esc> on --env desktop, off elsewhere ('' disables)."),
        explain: bool = typer.Option(False, "--explain", help="Print the ranked skill candidates with their "
                                     "scores and why the run/refuse decision went the way it did."),
        retrieval: str = typer.Option("fused", "--retrieval", help="How the task is matched to skills: fused "
                                      "(embeddings + BM25) | bm25 | heuristic (word overlap)."),
        handoff: bool = typer.Option(False, "--handoff", help="When the run stops outside known skills, or on a "
                                     "destructive action no one here may confirm (no terminal, no --yes), hand it "
                                     "to a person in a takeover live view, learn a verified skill from what they do "
                                     "(into --skills) and finish the task."),
        live: bool = typer.Option(False, "--live", help="Serve a live view (noVNC, token) of the run's "
                                  "desktop and print its URL; the page shows the current step and outcome."),
        computer_tool: str = COMPUTER_TOOL_OPT,
        no_thread: bool = NO_THREAD_OPT,
        keep_images: int = KEEP_IMAGES_OPT,
        grounder: str = GROUNDER_OPT,
        allow_js: bool = ALLOW_JS_OPT,
        upload_dir: Path | None = UPLOAD_DIR_OPT,
        allow_url: list[str] = ALLOW_URL_OPT,
        gui_family: str = GUI_FAMILY_OPT,
    ) -> None:
        """Run a task with the agent: skills first, then the model; writes a trajectory and report.html.

        Example: cua run 'type "hello" in mousepad' --env sandbox:mousepad --model scripted:replies.jsonl --yes
        """
        from rich.console import Console

        from cua.agent.loop import run_task
        from cua.agent.safety import DEFAULT_STOP_HOTKEY

        console = Console(stderr=True)
        options = model_options(model, computer_tool, no_thread, keep_images, grounder, allow_js, upload_dir,
                                allow_url, gui_family)
        if skills is not None and not skills.exists():
            console.print(f"[bold red]error:[/] skill library {str(skills)!r} does not exist; "
                          "build one with `cua explore` or leave out --skills")
            raise typer.Exit(2)
        hotkey = stop_hotkey if stop_hotkey is not None else (DEFAULT_STOP_HOTKEY if env == "desktop" else None)
        if handoff and skills is None:
            console.print("[bold red]error:[/] --handoff stores what it learns in a skill library: add --skills LIB.db")
            raise typer.Exit(2)
        env_arg, view = _live_env(env, sources, console, live) if live or handoff else (env, None)

        def on_step(n: int, desc: str) -> None:
            status.update(f"step {n + 1}: {desc[:100]}")
            if view is not None:
                view.update(step=n + 1, doing=desc, outcome="running")

        with console.status("starting...") as status:

            def ask(reason: str) -> bool:  # the spinner pauses while the terminal asks
                from rich.prompt import Confirm

                status.stop()
                try:
                    return Confirm.ask(f"[bold yellow]The agent wants to:[/] {reason}. Allow?", default=False)
                finally:
                    status.start()

            unconfirmed: list[str] = []  # destructive actions no one here could confirm: a person takes over

            def defer_to_person(reason: str) -> bool:
                unconfirmed.append(reason)
                return False

            result = run_task(
                task, env_arg, model=model, skills=skills, max_steps=max_steps, max_seconds=max_seconds,
                max_cost=max_cost, out=out, yes=yes, mode=mode, stop_hotkey=hotkey or None,
                allow_file_urls=allow_file_urls,
                confirm=ask if sys.stdin.isatty() else defer_to_person if handoff else None,
                env_options={"sources": sources},
                model_options=options,
                grounder=grounder, retrieval=retrieval,
                on_step=on_step)
        if view is not None:
            view.update(step=result.steps, doing="finished", outcome=result.outcome, note=result.message)
            view.close()
        if handoff and (result.outcome == "outside known skills" or (unconfirmed and not result.ok)):
            from cua.agent.handoff import handoff as hand_over

            why = (f"the agent may not do this alone: {unconfirmed[0]}" if unconfirmed
                   else "outside known skills")
            taken = hand_over(env_arg, task, skills, result.trajectory_dir or Path("runs"), say=console.print,
                              why=why)
            result.outcome, result.message = ("success" if taken.ok else "failure"), taken.message
        if env_arg is not env:
            env_arg.close()
        if explain:
            for row in result.nearest_skills:
                parts = [f"score {row['score']:.3f}"] + [f"{k} {row[k]:.3f}" for k in ("cosine", "lexical") if k in row]
                console.print(f"  candidate {row['name']} ({row['status']}): {', '.join(parts)}")
            for line in result.explain or ["(no explanation: the heuristic decided, or no library was given)"]:
                console.print(f"  why: {line}")
        color = "green" if result.ok else "yellow" if result.outcome == "outside known skills" else "red"
        console.print(f"[bold {color}]{result.outcome}[/]: {result.message}")
        if result.nearest_skills and not result.ok:
            console.print("nearest skills: " + ", ".join(
                f"{s['name']} ({s['status']}, score {s['score']})" for s in result.nearest_skills))
        console.print(f"{result.steps} steps, {result.model_calls} model calls, ${result.cost:.4f}; "
                      f"trajectory {result.trajectory_dir}; report {result.report}")
        print(json.dumps({"outcome": result.outcome, "message": result.message, "steps": result.steps,
                          "trajectory": str(result.trajectory_dir), "report": str(result.report),
                          "cost": result.cost, "nearest_skills": [s["name"] for s in result.nearest_skills]}))
        raise typer.Exit(0 if result.ok else 1)


def _live_env(env: str, sources: str, console: object, live: bool) -> tuple[object, object]:
    """The run's environment, started here so a live view (or a handoff) can show it, and the view."""
    from cua.env import EnvError, make_env
    from cua.liveview import open_live

    e = make_env(env, sources=sources)
    try:
        return e, open_live(e, say=console.print) if live else None  # type: ignore[attr-defined]
    except EnvError as err:
        e.close()
        console.print(f"[bold red]error:[/] {err}")  # type: ignore[attr-defined]
        raise typer.Exit(2) from None
