"""`cua record`, `cua replay`, `cua export`: demonstrations in, trajectories / datasets / skills out."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True, soft_wrap=True)
ENV_HELP = ("sandbox:APP (own desktop) | browser:URL (kiosk Chromium on one) | desktop ($DISPLAY) | "
            "remote:URL or vm:IMAGE (recorded on the guest, copied into --out)")


def _fail(message: str, code: int = 1) -> None:
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("record")(record)
    app.command("replay")(replay)
    app.command("export")(export)


def record(
    env: str = typer.Option("sandbox:mousepad", "--env", "-e", help=ENV_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="New session directory."),
    task: str = typer.Option("", "--task", "-t", help="What the demonstration does (goes into exports)."),
    fps: float = typer.Option(
        5.0, "--fps", help="Frames per second for the video and the pre-action frames."
    ),
    duration: float = typer.Option(None, "--duration", "-d", help="Stop after this many seconds."),
    stop_hotkey: str = typer.Option("ctrl+alt+q", help="Hotkey that stops the recording."),
    pause_hotkey: str = typer.Option("ctrl+alt+p", help="Hotkey that pauses / resumes."),
    scrub: bool = typer.Option(
        False, "--scrub", help="Also scrub digits and e-mail addresses from window titles."
    ),
    mask_unknown: bool = typer.Option(
        True, "--mask-unknown/--no-mask-unknown",
        help="Mask keys typed where no accessible element tells whether the field is a password.",
    ),
    live: bool = typer.Option(
        False, "--live", help="Serve a takeover live view (noVNC, token) to demonstrate in from a browser; "
        "its panel shows the counts, and its \"done\" button stops the recording."
    ),
) -> None:
    """Record a human demonstration until the stop hotkey, Ctrl-C / SIGTERM or --duration.

    With a sandbox env the desktop is started here; drive it through the printed DISPLAY
    (a VNC viewer, or xdotool). Example: cua record --env sandbox:mousepad --out demo1 --task "type hello"
    A remote:URL or vm:IMAGE env records on its guest and copies the session into --out when it stops:
    cua record --env vm:cua-guest --out demo2 --live
    """
    from cua.cli.record_remote import is_guest_env, record_on_guest

    if is_guest_env(env):
        record_on_guest(env, out, task, fps, duration, stop_hotkey, pause_hotkey, scrub, mask_unknown, live)
        return
    from cua.env import EnvError
    from recorder.probes import open_target
    from recorder.store import RecordingError

    try:
        target = open_target(env)
    except (EnvError, RecordingError) as e:
        _fail(str(e))
    from types import SimpleNamespace

    from cua.liveview import live_or_not
    from recorder.capture import Recorder

    try:  # the person's input through the page reaches the desktop: a takeover view, ended by "done"
        view = live_or_not(SimpleNamespace(display=target.display, env=target.x_env, name=env), live,
                           console.print, takeover=True, done_button=True)
    except EnvError as e:
        target.close()
        _fail(str(e))
    try:
        rec = Recorder(
            out,
            target.display,
            task=task,
            env_spec=env,
            fps=fps,
            probe=target.probe,
            x_env=target.x_env,
            stop_hotkey=stop_hotkey,
            pause_hotkey=pause_hotkey,
            scrub=scrub,
            mask_unknown=mask_unknown,
            on_status=lambda s: console.print(f"[dim]{s}[/]"),
        )
        rec.start()
    except RecordingError as e:
        view.close()
        target.close()
        _fail(str(e))

    def stop(*_):
        return rec.stopped.set()

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    print(f"DISPLAY={target.display}", flush=True)
    if target.x_env.get("XAUTHORITY"):  # a sandbox display admits only clients with its cookie
        print(f"XAUTHORITY={target.x_env['XAUTHORITY']}", flush=True)
    console.print(
        f"recording [bold]{env}[/] on DISPLAY={target.display} into {out}; stop with {stop_hotkey}, "
        f"Ctrl-C or SIGTERM (pause: {pause_hotkey})"
    )
    try:
        with console.status("recording...") as status:
            while not rec.stopped.wait(
                1.0 if duration is None else min(1.0, max(0.01, duration - rec.now()))
            ):
                if (duration is not None and rec.now() >= duration) or view.done.is_set():
                    break
                c = rec.writer.counts
                status.update(f"recording: {c['events']} events, {c['frames']} frames, {rec.now():.0f}s")
                view.update(step=c["events"], doing=f"recording: {c['frames']} frames, {rec.now():.0f}s",
                            outcome="recording", note=f"stop with {stop_hotkey} or the done button")
    finally:
        try:
            stats = rec.stop()
        except RecordingError as e:
            stats = None
            failure = str(e)
        for s, h in old.items():
            signal.signal(s, h)
        view.close()
        target.close()
    if stats is None:
        _fail(failure)
    console.print(
        f"saved {out}: {stats['events']} events, {stats['frames']} frames, "
        f"{stats['keyframes']} keyframes; complete in {stats['stop_to_complete_s']:.3f}s after stop"
    )
    print(json.dumps({"out": str(out), **{k: v for k, v in stats.items() if isinstance(v, (int, float))}}))


def replay(
    path: Path = typer.Argument(..., help="A recording (cua record) or trajectory directory."),
    env: str = typer.Option(
        None, "--env", "-e", help="Where to replay; default: the env it was recorded on."
    ),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the replay as a trajectory here."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any step's effect differs, too."),
) -> None:
    """Re-run a recording or trajectory, re-grounding each step by element signature, and report per step.

    Example: cua replay demo1 --env sandbox:mousepad
    """
    from rich.progress import Progress
    from rich.table import Table

    from cua.env import EnvError, make_env
    from recorder.demo import load_demo
    from recorder.replay import replay_path
    from recorder.store import RecordingError

    try:
        demo = load_demo(path)
    except RecordingError as e:
        _fail(str(e))
    spec = env or demo.env
    if not spec:
        _fail(f"{path} does not say which env it was recorded on; pass --env, e.g. --env sandbox:mousepad")
    opts = (
        {"size": tuple(demo.screen_size)}
        if demo.screen_size and spec.startswith(("sandbox:", "browser:"))
        else {}
    )
    try:
        with make_env(spec, **opts) as e, Progress(console=console, transient=True) as prog:
            bar = prog.add_task(f"replaying {len(demo.steps)} steps", total=len(demo.steps))
            report = replay_path(path, e, out, on_step=lambda r: prog.advance(bar))
    except (EnvError, RecordingError) as err:
        _fail(str(err))
    table = Table(title=f"replay of {path} on {spec}")
    for col in ("#", "action", "found by", "same element", "same effect", "ok"):
        table.add_column(col)
    mark = {True: "[green]yes[/]", False: "[red]no[/]", None: "-"}
    for s in report.steps:
        table.add_row(
            str(s.index),
            s.action[:60],
            s.method if s.method != "none" else "-",
            mark[s.element_found],
            mark[s.same_effect],
            mark[s.ok] + (f" {s.error}" if s.error else ""),
        )
    console.print(table)
    print(json.dumps(report.to_json()))
    if not report.ok or (strict and not report.same_effect):
        raise typer.Exit(1)


def export(
    paths: list[Path] = typer.Argument(..., help="Recording or trajectory directories."),
    fmt: str = typer.Option(..., "--format", "-f", help="trajectory | openai-chat | qwen-vl | skill"),
    out: Path = typer.Option(None, "--out", "-o", help="Output directory (not used by --format skill)."),
    skills: Path = typer.Option(None, "--skills", help="Skill library database (for --format skill)."),
    name: str = typer.Option(None, "--name", help="Skill name (default: from the task)."),
    verify: bool = typer.Option(
        True, "--verify/--no-verify", help="Replay a new skill on a fresh env to verify it."
    ),
    env: str = typer.Option(None, "--env", "-e", help="Env to verify skills on; default: the recorded one."),
    val: float = typer.Option(0.1, "--val", help="Validation fraction for datasets."),
    seed: int = typer.Option(0, "--seed", help="Seed of the train/validation split."),
    scrub: bool = typer.Option(
        False, "--scrub", help="Scrub e-mail addresses and long digit runs from text."
    ),
) -> None:
    """Export demonstrations as trajectories, fine-tuning datasets, or verified skills.

    Example: cua export demo1 --format qwen-vl --out ds
    """
    from recorder.export import FORMATS, export_any
    from recorder.store import RecordingError

    if fmt not in FORMATS:
        _fail(f"unknown --format {fmt!r}; use one of {', '.join(FORMATS)}")
    try:
        if fmt == "skill":
            _export_skills(paths, skills, name, verify, env)
            return
        if out is None:
            _fail(f"--format {fmt} needs --out DIR")
        result = export_any(paths, fmt, out, val_fraction=val, seed=seed, scrub=scrub)
    except RecordingError as e:
        _fail(str(e))
    console.print(f"exported {len(paths)} demonstration(s) as {fmt} into {out}: {result}")
    print(json.dumps({"out": str(out), **result}))


def _export_skills(
    paths: list[Path], db: Path | None, name: str | None, verify: bool, env: str | None
) -> None:
    from cua.env import EnvError
    from recorder.demo import load_demo
    from recorder.export import induce_skill, verify_skill
    from skills.library import SkillLibrary

    if db is None:
        _fail("--format skill needs --skills DB (the skill library file, created if missing)")
    if name and len(paths) > 1:
        _fail("--name names one skill; export one demonstration at a time with --name")
    rows = []
    with SkillLibrary(db) as lib:
        for p in paths:
            demo = load_demo(p)
            skill = lib.add(induce_skill(demo, name=name))
            status, error = skill.status, None
            if verify:
                spec = env or demo.env
                if not spec:
                    _fail(f"{p} does not say which env it was recorded on; pass --env to verify")
                opts = (
                    {"size": tuple(demo.screen_size)}
                    if demo.screen_size and spec.startswith(("sandbox:", "browser:"))
                    else {}
                )
                try:
                    res = verify_skill(skill, lib, spec, **opts)
                    error = res.error
                except EnvError as e:
                    lib.record_run(skill.name, False)
                    error = str(e)
                status = lib.get(skill.name).status
            console.print(
                f"skill [bold]{skill.name}[/] v{skill.version} ({len(skill.steps)} steps, "
                f"parameters {[q.name for q in skill.parameters]}): {status}"
                + (f" - {error}" if error else "")
            )
            rows.append({"name": skill.name, "version": skill.version, "status": status, "error": error})
    print(json.dumps({"skills": rows}))
    if verify and any(r["status"] != "verified" for r in rows):
        raise typer.Exit(1)
