"""Demonstrations -> trajectories, fine-tuning datasets (OpenAI chat, Qwen2-VL / UI-TARS) and skills.

- `export_trajectory`: the agent's trajectory format (cua/trajectory.py), so replay and the HTML
  report work on demonstrations and agent runs alike.
- `export_dataset`: JSONL + PNG images + train/validation split + a dataset card (README.md).
  `openai-chat`: {"messages": [system, user (text + image_url part), assistant (action call)]}.
  `qwen-vl`: {"image", "conversations": [{"from": "human", "value": "<image>..."},
  {"from": "gpt", "value": "Action: click(start_box='(x,y)')"}]} (UI-TARS action strings,
  absolute pixel coordinates of the image).
- `induce_skill` / `verify_skill`: a demonstration becomes a Skill (provenance "demonstrated",
  steps targeting element signatures, typed text as parameters), verified by replaying it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cua.actions import Action
from recorder.demo import Demo, load_demo
from recorder.privacy import scrub_text
from recorder.store import RecordingError

FORMATS = ("trajectory", "openai-chat", "qwen-vl", "skill")
SYSTEM_PROMPT = (
    "You are a computer-use agent. Given the task, the previous actions and a screenshot, "
    'reply with the next action as one call, e.g. click(x=10, y=20) or type(text="hi").'
)
HISTORY = 5


# ---------------------------------------------------------------------------- action strings
def uitars_action(action: Action) -> str:
    """The UI-TARS action string for one of our actions (cua.action_formats parses it back)."""
    d = action.to_json()
    k = d["kind"]

    def box(x, y):
        return f"'({x},{y})'"

    if k == "click":  # UI-TARS has no triple or middle click: extra keywords that parse back
        if d.get("button") == "right":
            return f"right_single(start_box={box(d['x'], d['y'])})"
        extra = ", clicks=3" if d.get("clicks", 1) == 3 else ""
        extra += ", button='middle'" if d.get("button") == "middle" else ""
        return f"click(start_box={box(d['x'], d['y'])}{extra})"
    if k == "double_click":
        return f"left_double(start_box={box(d['x'], d['y'])})"
    if k == "right_click":
        return f"right_single(start_box={box(d['x'], d['y'])})"
    if k == "move":
        return f"move(start_box={box(d['x'], d['y'])})"
    if k == "drag":
        return f"drag(start_box={box(d['x'], d['y'])}, end_box={box(d['to_x'], d['to_y'])})"
    if k == "scroll":
        dx, dy = d.get("dx", 0), d.get("dy", 0)
        direction = ("down" if dy > 0 else "up") if dy else ("right" if dx > 0 else "left")
        where = f"start_box={box(d['x'], d['y'])}, " if d.get("x") is not None else ""
        return f"scroll({where}direction='{direction}')"
    if k == "type":
        content = d["text"].replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
        return f"type(content='{content}')"
    if k == "key":
        return f"hotkey(key='{d['key']}')"
    if k == "hotkey":
        return f"hotkey(key='{' '.join(d['keys'])}')"
    if k == "done":
        return "finished()"
    if k == "wait":
        return "wait()"
    return action.to_call()


def _scrubbed(action: Action, scrub: bool) -> Action:
    if scrub and action.kind == "type":
        return action.model_copy(update={"text": scrub_text(action.text)})
    return action


# ---------------------------------------------------------------------------- trajectories
def export_trajectory(demo: Demo, out: Path, scrub: bool = False, report: bool = True) -> Path:
    """Write `demo` as a trajectory directory (source "demonstration"); returns the directory."""
    from cua.trajectory import TrajectoryMeta, TrajectoryWriter

    if (out / "meta.json").exists():
        raise RecordingError(f"{out} already holds a trajectory; choose a new --out directory")
    meta = TrajectoryMeta(
        task=demo.task,
        env=demo.env,
        model="human",
        source="demonstration",
        screen_size=demo.screen_size,
        extra={"recording": demo.name, "complete": demo.complete, "end_window": demo.end_window},
    )
    w = TrajectoryWriter(out, meta)
    for st in demo.steps:
        w.add(
            image=st.frame(),
            action=_scrubbed(st.action, scrub).to_json(),
            elements=[st.element] if st.element else None,
            t=st.t,
            extra={
                "events": st.events,
                "window": st.window,
                "masked": st.masked,
                "to_element": st.to_element,
            },
        )
    if demo.end_frame is not None:
        img = demo.end_frame()
        if img is not None:
            img.save(out / "frames" / "final.png", compress_level=1)
    w.finish("success" if demo.complete else "incomplete")
    if report:
        try:
            from cua.report import write_report

            write_report(out)
        except ImportError:
            pass
    return out


# ---------------------------------------------------------------------------- datasets
def _user_text(task: str, history: list[str]) -> str:
    hist = "\n".join(history[-HISTORY:]) or "(none)"
    return f"Task: {task or '(not given)'}\nPrevious actions:\n{hist}\nWhat is the next action?"


def _split(demos: list[Demo], n_steps: list[int], val_fraction: float, seed: int) -> list[list[bool]]:
    """Per step: True if it goes to validation. By episode when there are several, else by step."""
    rng = random.Random(seed)
    if len(demos) >= 2:
        n_val = max(1, round(len(demos) * val_fraction)) if val_fraction > 0 else 0
        val_eps = set(rng.sample(range(len(demos)), min(n_val, len(demos) - 1)))
        return [[i in val_eps] * n for i, n in enumerate(n_steps)]
    n = n_steps[0] if n_steps else 0
    n_val = max(1, round(n * val_fraction)) if (val_fraction > 0 and n >= 2) else 0
    val = set(rng.sample(range(n), n_val))
    return [[j in val for j in range(n)]]


def export_dataset(
    demos: Iterable[Demo],
    out: Path,
    layout: str,
    val_fraction: float = 0.1,
    seed: int = 0,
    scrub: bool = False,
) -> dict[str, Any]:
    """Write train.jsonl / val.jsonl / images/ / README.md under `out`; returns the counts."""
    if layout not in ("openai-chat", "qwen-vl"):
        raise RecordingError(f"unknown dataset layout {layout!r}; use openai-chat or qwen-vl")
    if not 0 <= val_fraction < 1:
        raise RecordingError(f"--val {val_fraction} must be in [0, 1)")
    demos = list(demos)
    out.mkdir(parents=True, exist_ok=True)
    (out / "images").mkdir(exist_ok=True)
    splits = _split(demos, [len(d.steps) for d in demos], val_fraction, seed)
    files = {"train": open(out / "train.jsonl", "w"), "val": open(out / "val.jsonl", "w")}  # noqa: SIM115
    counts = {"train": 0, "val": 0, "skipped_no_frame": 0}
    sizes: set[tuple[int, int]] = set()
    try:
        for ep, (demo, is_val) in enumerate(zip(demos, splits)):
            history: list[str] = []
            slug = re.sub(r"[^A-Za-z0-9_-]+", "_", demo.name)[:40]
            for st, v in zip(demo.steps, is_val):
                action = _scrubbed(st.action, scrub)
                target = action.to_call() if layout == "openai-chat" else uitars_action(action)
                img = st.frame()
                if img is None:
                    counts["skipped_no_frame"] += 1
                    history.append(target)
                    continue
                rel = f"images/{ep:03d}_{slug}_{st.index:04d}.png"
                img.save(out / rel, compress_level=6)
                sizes.add(img.size)
                task = scrub_text(demo.task) if scrub else demo.task
                sid = f"{ep:03d}_{slug}_{st.index:04d}"
                if layout == "openai-chat":
                    rec = {
                        "id": sid,
                        "messages": [
                            {"role": "system", "content": SYSTEM_PROMPT},
                            {
                                "role": "user",
                                "content": [
                                    {"type": "text", "text": _user_text(task, history)},
                                    {"type": "image_url", "image_url": {"url": rel}},
                                ],
                            },
                            {"role": "assistant", "content": target},
                        ],
                    }
                else:
                    rec = {
                        "id": sid,
                        "image": rel,
                        "conversations": [
                            {"from": "human", "value": "<image>\n" + _user_text(task, history)},
                            {"from": "gpt", "value": f"Action: {target}"},
                        ],
                    }
                split = "val" if v else "train"
                files[split].write(json.dumps(rec, ensure_ascii=False) + "\n")
                counts[split] += 1
                history.append(target)
    finally:
        for f in files.values():
            f.close()
    _write_card(out, layout, demos, counts, sizes, val_fraction, seed, scrub)
    return counts


def _write_card(
    out: Path,
    layout: str,
    demos: list[Demo],
    counts: dict[str, int],
    sizes: set,
    val: float,
    seed: int,
    scrub: bool,
) -> None:
    example = (out / "train.jsonl").read_text().splitlines()[:1] or (
        out / "val.jsonl"
    ).read_text().splitlines()[:1]
    kinds: dict[str, int] = {}
    for d in demos:
        for s in d.steps:
            kinds[s.action.kind] = kinds.get(s.action.kind, 0) + 1
    target = (
        "the assistant message is our action call string (parse_action reads it)"
        if layout == "openai-chat"
        else "the gpt turn is a UI-TARS action string `Action: ...` in absolute pixels of the image"
    )
    card = f"""# cua demonstration dataset ({layout})

Human demonstrations recorded with `cua record` and exported with `cua export --format {layout}`.

| split | samples |
|---|---|
| train | {counts["train"]} |
| validation | {counts["val"]} |

- Episodes: {len(demos)} ({", ".join(d.name for d in demos)})
- Tasks: {sorted({d.task for d in demos if d.task})}
- Split: {"by episode" if len(demos) >= 2 else "by step"}, validation fraction {val}, seed {seed}
- Action kinds: {kinds}
- Images: PNG pre-action frames, sizes {sorted(sizes)}; one image per sample
- Target: {target}
- Files: `train.jsonl`, `val.jsonl`, `images/`
- Privacy: keys typed into password fields are masked and those fields blurred at capture;
  e-mail/digit scrubbing {"applied" if scrub else "not applied"}; no host, user or MAC in metadata.
  Review images before sharing: other on-screen content is kept as recorded.
- Steps without a stored frame were skipped: {counts["skipped_no_frame"]}

Example record:

```json
{example[0] if example else "{}"}
```
"""
    (out / "README.md").write_text(card)


# ---------------------------------------------------------------------------- skills
def _target(el: dict[str, Any] | None) -> dict[str, Any] | None:
    if not el or not el.get("signature"):
        return None
    t: dict[str, Any] = {"signature": el["signature"]}
    if el.get("name"):
        t["text"] = el["name"]
    if el.get("role"):
        t["role"] = el["role"]
    return t


def induce_skill(demo: Demo, name: str | None = None, app: str | None = None) -> Any:
    """A Skill from a demonstration: pointer steps by element signature, typed text as parameters."""
    from skills.skill import Condition, Skill, SkillParam, SkillStep

    if not demo.steps:
        raise RecordingError(f"{demo.path} has no actions to turn into a skill")
    params: list[SkillParam] = []
    steps: list[SkillStep] = []
    for st in demo.steps:
        d = st.action.to_json()
        note = ""
        if d["kind"] == "move":
            continue
        if d["kind"] == "type":
            pname = "text" if not params else f"text{len(params) + 1}"
            params.append(
                SkillParam(
                    name=pname,
                    description="typed text" + (" (secret)" if st.masked else ""),
                    default=None if st.masked else d["text"],
                )
            )
            d["text"] = "{" + pname + "}"
        tgt = _target(st.element)
        if tgt and "x" in d:
            d.pop("x"), d.pop("y")
            d["target"] = tgt
            note = f"element {tgt.get('role', '')} {tgt.get('text', '')!r}".strip()
        to_tgt = _target(st.to_element)
        if to_tgt and d["kind"] == "drag":
            d.pop("to_x"), d.pop("to_y")
            d["to_target"] = to_tgt
        steps.append(SkillStep(action=d, note=note))
    app = app or _app_of(demo)
    title = (demo.end_window or {}).get("title") or None
    base = (
        name
        or re.sub(r"[^a-z0-9]+", "_", (demo.task or demo.name).lower()).strip("_")[:48]
        or "demonstration"
    )
    return Skill(
        name=base,
        app=app,
        description=demo.task or f"demonstrated in {demo.name}",
        when_to_use=demo.task or "",
        parameters=params,
        steps=steps,
        provenance="demonstrated",
        postcondition=Condition(window_title=title),
        extra={"recording": demo.name, "env": demo.env},
    )


def _app_of(demo: Demo) -> str:
    if demo.env.startswith("sandbox:"):
        return demo.env.split(":", 1)[1].split()[0].rsplit("/", 1)[-1]
    for st in demo.steps:
        if st.window and st.window.get("app"):
            return st.window["app"].lower()
    return demo.env or "unknown"


def verify_skill(skill: Any, library: Any, env_spec: str, **env_options: Any) -> Any:
    """Replay `skill` on a fresh env and record the outcome in the library; returns the SkillRunResult."""
    from cua.env import make_env
    from skills.runner import run_skill

    with make_env(env_spec, **env_options) as env:
        result = run_skill(skill, env, library=library)
    library.record_run(skill.name, result.ok)
    return result


def export_any(paths: list[Path], fmt: str, out: Path, **kw: Any) -> dict[str, Any]:
    """Dispatcher behind `cua export` (skills are handled by the CLI, which owns the library)."""
    demos = [load_demo(p) for p in paths]
    if fmt == "trajectory":
        if len(demos) == 1:
            return {"trajectories": [str(export_trajectory(demos[0], out, scrub=kw.get("scrub", False)))]}
        return {
            "trajectories": [
                str(export_trajectory(d, out / d.name, scrub=kw.get("scrub", False))) for d in demos
            ]
        }
    if fmt in ("openai-chat", "qwen-vl"):
        return export_dataset(
            demos, out, fmt, kw.get("val_fraction", 0.1), kw.get("seed", 0), kw.get("scrub", False)
        )
    raise RecordingError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
