"""The `cua` command, the one composition root: each verb group lives in a module of this package."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import typer

from cua.cli.common import ENV_OPT, CuaGroup, console, fail

app = typer.Typer(
    name="cua",
    help="Computer-use agent toolkit: observe, act, run, explore, record, replay, export, eval, serve.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=CuaGroup,  # --ca FILE on every command that takes --env
)

# Each module registers its verbs: run | explore, skills | record, replay, export | eval | serve | demo | view, mcp | vm.
AREAS = ("cua.cli.run", "cua.cli.skills", "cua.cli.record", "cua.cli.eval", "cua.cli.serve", "cua.demo", "cua.cli.view",
         "cua.cli.vm", "cua.cli.osworld")


@app.command()
def doctor() -> None:
    """What is installed or missing, and how to fix it.

    Example: cua doctor
    """
    from cua.doctor import run_doctor

    raise typer.Exit(run_doctor(console))


@app.command()
def observe(
    env: str = ENV_OPT,
    out: Path = typer.Option(Path("observation"), "--out", "-o", help="Directory for PNG + JSON + marks."),
    sources: str = typer.Option("auto", help="Comma list of a11y,dom,ocr,vision, or auto."),
) -> None:
    """Screenshot + elements JSON (+ set-of-mark image) of an environment.

    Example: cua observe --env sandbox:mousepad --out obs
    """
    from cua.env import EnvError, make_env

    try:
        with make_env(env, sources=sources) as e:
            obs = e.observe()
            paths = obs.save(out)
            from cua.perception.som import render_som

            render_som(obs).save(out / "som.png")
            paths["som"] = out / "som.png"
    except EnvError as err:
        fail(str(err))
    by_source: dict[str, int] = {}
    for el in obs.elements:
        by_source[el.source] = by_source.get(el.source, 0) + 1
    console.print(f"{len(obs.elements)} elements {by_source} in {obs.window_title!r}; timings "
                  + ", ".join(f"{k}={v * 1000:.0f}ms" for k, v in obs.timings.items()))
    if "a11y" in obs.timings and not by_source.get("a11y"):
        from cua.perception.a11y_hint import no_tree_message

        console.print(f"[yellow]{no_tree_message(obs.app or env.split(':', 1)[-1])}[/yellow]")
    print(json.dumps({k: str(v) for k, v in paths.items()}))


@app.command()
def act(
    action: str = typer.Argument(..., help="One action: our JSON or call syntax, e.g. 'click(text=\"File\")'."),
    env: str = ENV_OPT,
    out: Path | None = typer.Option(None, "--out", "-o", help="Save the observation after the action here."),
) -> None:
    """Run one action in an environment and print what happened.

    Example: cua act --env sandbox:mousepad 'click(text="Search")'
    """
    from cua.actions import ActionParseError, parse_action
    from cua.env import EnvError, make_env

    try:
        parsed = parse_action(action)
    except ActionParseError as err:
        fail(f"cannot parse action {action!r}: {err}")
    try:
        with make_env(env) as e:
            e.observe()
            result = e.act(parsed)
            if out is not None:
                e.observe().save(out)
    except EnvError as err:
        fail(str(err))
    print(result.model_dump_json())
    if not result.ok:
        raise typer.Exit(1)


def _register_areas() -> None:
    for module in AREAS:
        importlib.import_module(module).register(app)


_register_areas()


def main() -> None:
    # What cua writes holds screen content, typed text or secrets (recordings, frames, reports, skill
    # libraries, logs, tokens): private to this user, 0600 files and 0700 directories.
    os.umask(0o077)
    app(prog_name="cua")

