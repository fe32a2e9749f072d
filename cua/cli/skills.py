"""`cua explore` and `cua skills list|show|search|run|verify|export|import`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from cua.cli.common import ENV_OPT, SKILLS_OPT, console, fail


def app_of(env: str) -> str:
    """The app an ENV string runs: sandbox:mousepad -> mousepad, vm:IMAGE -> mousepad, browser:URL -> its host/page."""
    kind, _, arg = env.partition(":")
    if kind == "sandbox" and arg.strip():
        return Path(arg.split()[0]).name
    if kind == "browser" and arg:
        from urllib.parse import urlparse

        u = urlparse(arg)
        return (u.netloc or Path(u.path).stem or "browser").lower()
    if kind == "vm":
        from cua.env.vm import DEFAULT_APP

        return DEFAULT_APP  # the VM opens this app, so its skills and profile are that app's
    return kind or "app"


class _Lent:
    """An env lent to an explore worker: used as is, but its close() is the lender's (after the curriculum)."""

    def __init__(self, env) -> None:
        self._env = env

    def __getattr__(self, name: str):
        return getattr(self._env, name)

    def close(self) -> None:
        pass


def open_library(path: Path, must_exist: bool = True):
    from skills.library import SkillLibrary

    if must_exist and not path.exists():
        fail(f"no skill library at {path}; build one with `cua explore --env sandbox:mousepad --skills {path}`")
    return SkillLibrary(path)


def find_skill(lib: Any, name: str):
    """Exact name, else a unique-ish name match (last path segment first), else the best BM25 hit."""
    from skills.profile import clean_name

    hit = lib.get(name)
    if hit is not None:
        return hit
    want = clean_name(name).lower().rstrip(".…")
    skills = lib.list()
    last = [s for s in skills if s.name.split(" › ")[-1].lower().rstrip(".…") == want]
    contains = [s for s in skills if want in s.name.lower()]
    for group in (last, contains):
        if group:
            return min(group, key=lambda s: (s.status != "verified", len(s.name)))
    found = lib.search(name, k=1)
    return found[0][0] if found else None


NO_CAP = 10**9  # `--max-actions 0`: the wall-clock budget alone ends the run


def register(app: typer.Typer) -> None:
    skills_app = typer.Typer(help="The skill library: list, show, search, run, verify, export, import.",
                             no_args_is_help=True)

    @app.command("explore")
    def explore(
        env: str = ENV_OPT,
        skills: Path = SKILLS_OPT,
        max_actions: int = typer.Option(0, min=0, help="Total actions: exploration, backtracking, verification "
                                        "replays, negative controls and resets all count (0: no cap; the "
                                        "minutes are the budget)."),
        minutes: float = typer.Option(15.0, help="Wall-clock budget."),
        max_depth: int = typer.Option(0, help="Deepest state explored (0: the app profile's value)."),
        max_branch: int = typer.Option(200, help="Candidates tried per state."),
        verify_runs: int = typer.Option(2, min=1, help="Replays from a fresh reset on which each new skill's "
                                        "effect must hold again before it is verified."),
        profile: Path | None = typer.Option(None, help="Explorer profile TOML (default: skills/profiles/APP.toml)."),  # noqa: B008
        sources: str = typer.Option("a11y", help="Perception sources for the env (a11y is fast; 'ocr,vision' "
                                               "explores an app without an accessibility tree)."),
        curriculum: bool = typer.Option(True, help="Compose and verify dialog skills after exploring."),
        only: str | None = typer.Option(None, help="Regex: explore only the start-state controls it matches "
                                                   "(e.g. '^Search$' for one menu)."),
        workers: int = typer.Option(1, min=1, max=4, help="Parallel explorers, each on its own env (a sandbox, or a VM for vm:IMAGE)."),
        live: bool = typer.Option(False, "--live", help="Serve a live view (noVNC, token) of the explored desktop "
                                  "and print its URL; its panel shows actions, states and skills so far."),
    ) -> None:
        """Explore an app by GUI-DFS and store verified skills; a rerun resumes the stored graph.

        Example: cua explore --env sandbox:mousepad --skills lib.db --minutes 15

        Example: cua explore --env sandbox:mousepad --skills lib.db --only '^Search$' --max-actions 30

        Example: cua explore --env 'sandbox:env NO_AT_BRIDGE=1 mousepad' --sources ocr,vision --skills lib.db
        """
        import re
        import threading

        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from cua.env import EnvError, make_env
        from cua.liveview import live_or_not
        from skills.explorer import Budget, Explorer
        from skills.graph import UIGraph
        from skills.profile import load_profile

        name = app_of(env)
        try:
            prof = load_profile(name, profile)
            re.compile(only or "")
        except re.error as e:
            fail(f"--only {only!r} is not a valid regular expression ({e}); e.g. --only '^Search$'")
        except ValueError as e:
            fail(str(e))
        budget = Budget(max_actions=max_actions or NO_CAP, minutes=minutes, max_depth=max_depth or prof.max_depth,
                        max_branch=max_branch)
        lib, graph = open_library(skills, must_exist=False), UIGraph(skills)
        cols = [TextColumn("[bold]explore[/]"), BarColumn(), TextColumn("{task.completed} actions"),
                TextColumn("{task.fields[info]}"), TimeElapsedColumn()]
        try:
            with make_env(env, sources=sources) as e, live_or_not(e, live, console.print) as view, \
                    Progress(*cols, console=console) as bar:
                task = bar.add_task("explore", total=max_actions or None, info="starting")

                def show(st) -> None:
                    info = f"skills {st.skills} · verified {st.verified} · failed {st.failed}"
                    if threading.current_thread() is threading.main_thread():  # SQLite: this thread's connection
                        info = f"states {graph.counts()['states']} · {info} · explored {coverage(graph):.0%}"
                    bar.update(task, completed=st.total_actions, info=info)
                    view.update(step=st.total_actions, doing=info, outcome="exploring")

                screens = skills.with_name(skills.name + ".states")
                no_tree = "a11y" not in sources and sources != "auto"
                if no_tree:  # menus by their OCR'd text, buttons by the detector
                    from skills.visual_env import VisualControlsEnv

                    e = VisualControlsEnv(e)
                ex = Explorer(e, lib, graph, prof, budget, app=name, verify_runs=verify_runs, on_progress=show,
                              only=only, screens=screens)
                if workers > 1:
                    from skills.workers import explore_parallel

                    spare = [e]  # worker 0 explores on the env opened above (a VM boots in minutes), kept open

                    def worker_env():
                        return _Lent(spare.pop()) if spare else make_env(env, sources=sources)

                    stats = explore_parallel(worker_env, skills, prof, budget, name,
                                             workers=workers, verify_runs=verify_runs, only=only, screens=screens,
                                             on_progress=show)
                else:
                    stats = ex.run()
                if curriculum:  # composites have their own allowance, counted in the same stats
                    from skills.curriculum import compose_and_verify

                    stats.notes += compose_and_verify(ex)
                view.update(step=stats.total_actions, doing="finished", outcome=f"{stats.verified} verified skills",
                            note=f"stopped: {stats.stopped}")
        except EnvError as err:
            fail(str(err))
        finally:
            graph.close()
        summary = {"states": stats.states, "skills": stats.skills, "verified": stats.verified,
                   "failed": stats.failed, "unverified": stats.unverified, "explore_actions": stats.explore_actions,
                   "total_actions": stats.total_actions, "resets": stats.resets, "effects": stats.effects,
                   "stopped": stats.stopped, "seconds": round(stats.seconds, 1), "library": len(lib),
                   "sources": sources}
        lib.close()
        for n in stats.notes[:10]:
            console.print(f"[yellow]note:[/] {n}")
        print(json.dumps(summary))

    @skills_app.command("list")
    def list_(skills: Path = SKILLS_OPT, app_name: str | None = typer.Option(None, "--app"),
              status: str | None = typer.Option(None, help="verified | failed | unverified"),
              as_json: bool = typer.Option(False, "--json", help="One JSON object per line.")) -> None:
        """List the skills in a library (latest versions).

        Example: cua skills list --skills lib.db --status verified
        """
        from rich.console import Console
        from rich.table import Table

        with open_library(skills) as lib:
            rows = lib.list(app=app_name, status=status)
        if as_json:
            for s in rows:
                print(json.dumps({"name": s.name, "app": s.app, "status": s.status, "version": s.version,
                                  "verified_runs": s.verified_runs, "failed_runs": s.failed_runs,
                                  "provenance": s.provenance}))
            return
        t = Table("name", "app", "status", "ok/fail", "v", "provenance")
        for s in rows:
            t.add_row(s.name, s.app, s.status, f"{s.verified_runs}/{s.failed_runs}", str(s.version), s.provenance)
        Console().print(t)  # the table is the output: stdout
        console.print(f"{len(rows)} skill(s)")

    @skills_app.command("show")
    def show(name: str, skills: Path = SKILLS_OPT) -> None:
        """Print one skill as JSON (steps, conditions, counts).

        Example: cua skills show "Search › Find and Replace..." --skills lib.db
        """
        with open_library(skills) as lib:
            s = find_skill(lib, name)
        if s is None:
            fail(f"no skill matches {name!r}; `cua skills list --skills {skills}` shows the names")
        print(s.model_dump_json(indent=1))

    @skills_app.command("search")
    def search(text: str, skills: Path = SKILLS_OPT, k: int = typer.Option(5, "-k"),
               status: str | None = typer.Option(None, help="Only skills with this status.")) -> None:
        """Find skills for a task description (BM25 over names, descriptions and UI paths).

        Example: cua skills search "open the find and replace dialog" --skills lib.db
        """
        with open_library(skills) as lib:
            for s, score in lib.search(text, k=k, status=status):
                print(f"{score:6.2f}  {s.name}  [{s.status}]  {s.description}")

    @skills_app.command("run")
    def run(name: str, env: str = ENV_OPT, skills: Path = SKILLS_OPT,
            arg: list[str] = typer.Option([], "--arg", help="Parameter value as NAME=VALUE (repeatable)."),  # noqa: B008
            sources: str = typer.Option("a11y", help="Perception sources for the env.")) -> None:
        """Replay a skill on a fresh environment; exit 1 if it fails.

        Example: cua skills run "Find and Replace" --env sandbox:mousepad --skills lib.db
        """
        from cua.env import EnvError, make_env
        from skills.runner import run_skill

        args = {}
        for a in arg:
            k, sep, v = a.partition("=")
            if not sep or not k:
                fail(f"--arg {a!r} must look like NAME=VALUE")
            args[k] = v
        with open_library(skills) as lib:
            s = find_skill(lib, name)
            if s is None:
                fail(f"no skill matches {name!r}; `cua skills list --skills {skills}` shows the names")
            console.print(f"running {s.name!r} ({s.status}, {len(s.steps)} steps)")
            try:
                with make_env(env, sources=sources) as e:
                    e.reset()
                    res = run_skill(s, e, args, library=lib)
            except EnvError as err:
                fail(str(err))
        print(json.dumps({"skill": s.name, "ok": res.ok, "error": res.error, "steps": len(res.steps)}))
        if not res.ok:
            raise typer.Exit(1)

    @skills_app.command("verify")
    def verify(env: str = ENV_OPT, skills: Path = SKILLS_OPT,
               name: list[str] = typer.Option([], "--name", help="Only these skills (repeatable)."),  # noqa: B008
               runs: int = typer.Option(1, help="Replays per skill, each from a fresh reset."),
               sources: str = typer.Option("a11y")) -> None:
        """Re-run skills from a fresh reset; those that no longer work are marked failed (drifted).

        Example: cua skills verify --env sandbox:mousepad --skills lib.db --name "Search › Find"
        """
        from rich.progress import Progress

        from cua.env import EnvError, make_env
        from skills.runner import run_skill

        with open_library(skills) as lib:
            todo = [find_skill(lib, n) for n in name] if name else lib.list(app=app_of(env))
            if any(s is None for s in todo):
                fail(f"no skill matches one of {name}")
            drifted = []
            try:
                with make_env(env, sources=sources) as e, Progress(console=console) as bar:
                    task = bar.add_task("verify", total=len(todo) * runs)
                    for s in todo:
                        was = s.status
                        for _ in range(runs):
                            e.reset()
                            res = run_skill(s, e, library=lib)
                            lib.record_run(s.name, res.ok)
                            bar.advance(task)
                            if not res.ok:
                                if was == "verified":
                                    drifted.append(s.name)
                                console.print(f"[red]failed[/] {s.name}: {res.error}")
                                break
            except EnvError as err:
                fail(str(err))
        print(json.dumps({"checked": len(todo), "drifted": drifted}))
        if drifted:
            raise typer.Exit(1)

    @skills_app.command("export")
    def export(out: Path, skills: Path = SKILLS_OPT) -> None:
        """Write the library's skills to a JSON file.

        Example: cua skills export skills.json --skills lib.db
        """
        with open_library(skills) as lib:
            console.print(f"exported {lib.export_json(out)} skill(s) to {out}")

    @skills_app.command("import")
    def import_(src: Path, skills: Path = SKILLS_OPT) -> None:
        """Add the skills of a JSON export (as new versions); a malformed file is rejected whole.

        Example: cua skills import skills.json --skills lib.db
        """
        from skills.library import SkillImportError

        with open_library(skills, must_exist=False) as lib:
            try:
                added = lib.import_json(src)
            except SkillImportError as e:
                fail(str(e))
        console.print(f"imported {len(added)} skill(s) into {skills}")

    app.add_typer(skills_app, name="skills")


def coverage(graph: Any) -> float:
    """Share of known states whose candidates have all been tried."""
    done, total = graph.db.execute("SELECT SUM(done), COUNT(*) FROM states").fetchone()
    return (done or 0) / total if total else 0.0
