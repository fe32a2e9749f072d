"""Several explorers on one graph: each drives its own env (sandbox), they share the budget and split the work.

A worker that runs out of open states waits; a busy worker that discovers a new state while another
waits leaves it open instead of descending into it, so the waiting worker claims it. Claims live in
memory (threads of one process); the SQLite graph and library are shared through their own WAL files.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skills.explorer import Budget, Explorer, Stats


class WorkerPool:
    """Shared action budget, claimed states and idle count of the workers of one run."""

    def __init__(self, workers: int) -> None:
        self.lock = threading.Lock()
        self.claimed: set[str] = set()
        self.actions = 0
        self.idle = 0
        self.workers = workers
        self.done = False

    def take_action(self, limit: int) -> bool:
        with self.lock:
            if self.actions >= limit:
                return False
            self.actions += 1
            return True

    def claim(self, key: str) -> bool:
        with self.lock:
            if key in self.claimed:
                return False
            self.claimed.add(key)
            return True

    def release(self, key: str) -> None:
        with self.lock:
            self.claimed.discard(key)

    def others_busy(self) -> bool:
        with self.lock:
            return self.idle < self.workers - 1 or bool(self.claimed)

    def set_idle(self, delta: int) -> None:
        with self.lock:
            self.idle += delta


def add_stats(parts: list[Stats]) -> Stats:
    total = Stats()
    for s in parts:
        for f in ("explore_actions", "total_actions", "resets", "escapes", "skills", "verified", "failed",
                  "unverified"):
            setattr(total, f, getattr(total, f) + getattr(s, f))
        for k, v in s.effects.items():
            total.effects[k] = total.effects.get(k, 0) + v
        total.notes += s.notes
        total.seconds = max(total.seconds, s.seconds)
        total.states = max(total.states, s.states)
    stops = {s.stopped for s in parts if s.stopped}
    total.stopped = next((x for x in stops if x.startswith("budget")), next(iter(stops), ""))
    return total


def explore_parallel(make_env: Callable[[], Any], db: str | Path, profile: Any, budget: Budget, app: str,
                     workers: int = 2, verify_runs: int = 2, only: str | None = None,
                     screens: str | Path | None = None,
                     on_progress: Callable[[Stats], None] | None = None) -> Stats:
    """Run `workers` explorers (threads, one env each) on one graph/library file; returns the summed stats."""
    from skills.graph import UIGraph
    from skills.library import SkillLibrary

    pool = WorkerPool(workers)
    parts: list[Stats] = [Stats() for _ in range(workers)]
    errors: list[BaseException] = []
    t0 = time.monotonic()

    def report(_: Stats) -> None:
        if on_progress:
            on_progress(add_stats(parts))

    def work(i: int) -> None:
        lib = graph = env = None
        try:
            env = make_env()
            lib, graph = SkillLibrary(db), UIGraph(db)
            ex = Explorer(env, lib, graph, profile, budget, app=app, verify_runs=verify_runs, only=only,
                          screens=screens, on_progress=report, pool=pool)
            ex.t0 = t0
            ex.stats = parts[i]
            ex.run(final_verify=(i == 0))
        except BaseException as e:  # noqa: BLE001 - reported to the caller after the others stop
            errors.append(e)
            with pool.lock:
                pool.done = True
        finally:
            for obj in (graph, lib, env):
                if obj is not None:
                    obj.close()

    # worker 0 starts first: it sets the graph's root before the others look for open states
    threads = [threading.Thread(target=work, args=(i,), name=f"explorer-{i}", daemon=True) for i in range(workers)]
    for i, t in enumerate(threads):
        t.start()
        if i == 0:
            _wait_root(db, t)
    for t in threads:
        t.join()
    if errors and not any(p.explore_actions for p in parts):
        raise errors[0]
    total = add_stats(parts)
    total.notes += [f"worker error: {e}" for e in errors]
    return total


def _wait_root(db: str | Path, first: threading.Thread, timeout: float = 120.0) -> None:
    """Until worker 0 has stored the start state (bounded), so others share its root."""
    from skills.graph import UIGraph

    deadline = time.monotonic() + timeout
    g = UIGraph(db)
    try:
        while first.is_alive() and time.monotonic() < deadline and g.get_meta("root") is None:
            time.sleep(0.1)
    finally:
        g.close()
