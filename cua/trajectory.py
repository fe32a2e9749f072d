"""Trajectory directories: meta.json + steps.jsonl + frames/NNNNNN.png (+ report.html).

Agent runs, exported demonstrations and replays all write this one format, so replay, reports
and fine-tuning export read any of them. Steps are appended and flushed one line at a time,
so a killed writer leaves every finished step readable.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

from PIL import Image
from pydantic import BaseModel, Field

FORMAT_VERSION = 1


class TrajectoryMeta(BaseModel):
    task: str = ""
    env: str = ""
    model: str = ""
    started: float = Field(default_factory=time.time)
    ended: float | None = None
    outcome: str | None = Field(None, description="success | failure | outside known skills | error | ...")
    source: str = Field("agent", description="agent | demonstration | replay")
    screen_size: tuple[int, int] | None = None
    version: int = FORMAT_VERSION
    extra: dict[str, Any] = Field(default_factory=dict)


class Step(BaseModel):
    index: int
    frame: str | None = Field(None, description="Path of the pre-action frame, relative to the directory.")
    planner_text: str = ""
    action: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    elements: list[dict[str, Any]] | None = Field(None, description="Target element(s) for this step.")
    timings: dict[str, float] = Field(default_factory=dict)
    t: float = Field(default_factory=time.time)
    extra: dict[str, Any] = Field(default_factory=dict)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class TrajectoryWriter:
    """Append-only writer; use as a context manager or call finish()."""

    def __init__(self, directory: Path | str, meta: TrajectoryMeta):
        self.dir = Path(directory)
        (self.dir / "frames").mkdir(parents=True, exist_ok=True)
        self.meta = meta
        steps = self.dir / "steps.jsonl"
        self.count = len(steps.read_text().splitlines()) if steps.exists() else 0  # appending to an earlier run
        self._steps = open(steps, "a", buffering=1)
        self.write_meta()

    def write_meta(self) -> None:
        _atomic_write(self.dir / "meta.json", self.meta.model_dump_json(indent=1))

    def save_frame(self, image: Image.Image | None, index: int | None = None) -> str | None:
        if image is None:
            return None
        rel = f"frames/{self.count if index is None else index:06d}.png"
        image.save(self.dir / rel, compress_level=1)
        return rel

    def add(self, step: Step | None = None, *, image: Image.Image | None = None, **fields: Any) -> Step:
        """Append one step (and its frame); the line is flushed before returning."""
        if step is None:
            step = Step(index=self.count, **fields)
        if image is not None and step.frame is None:
            step.frame = self.save_frame(image, step.index)
        self._steps.write(step.model_dump_json() + "\n")
        self._steps.flush()
        os.fsync(self._steps.fileno())
        self.count += 1
        return step

    def finish(self, outcome: str, **extra: Any) -> None:
        self.meta.ended = time.time()
        self.meta.outcome = outcome
        self.meta.extra.update(extra)
        self.write_meta()
        self._steps.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._steps.closed:
            self.finish(self.meta.outcome or ("error" if exc[0] else "unfinished"))


class Trajectory:
    """Reader: tolerant of a torn last line (a writer killed mid-write)."""

    def __init__(self, directory: Path | str):
        self.dir = Path(directory)
        meta_path = self.dir / "meta.json"
        if not meta_path.exists():
            raise FileNotFoundError(f"{self.dir} is not a trajectory directory (no meta.json)")
        self.meta = TrajectoryMeta.model_validate_json(meta_path.read_text())

    def steps(self) -> Iterator[Step]:
        path = self.dir / "steps.jsonl"
        if not path.exists():
            return
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            try:
                yield Step.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValueError):
                break  # torn tail after a kill: everything before it is intact

    def frame(self, step: Step) -> Image.Image | None:
        return Image.open(self.dir / step.frame) if step.frame else None

    def __len__(self) -> int:
        return sum(1 for _ in self.steps())
