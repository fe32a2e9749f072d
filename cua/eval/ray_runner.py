"""Episodes on Ray: one actor per worker, each owning its own environment; results stream back.

It knows nothing of tasks: the runner hands it JSON jobs and the two functions an actor calls
(run one job, close the actor's environment), so the runner imports this module, not the reverse.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator


def _connect(address: str, workers: int) -> None:
    import ray

    if ray.is_initialized():
        return
    kw = dict(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    if address == "auto":
        try:
            ray.init(address="auto", **kw)  # an existing cluster, if one runs here
            return
        except (ConnectionError, RuntimeError, ValueError):
            pass
        ray.init(num_cpus=max(workers, 1), **kw)  # else a local instance
    elif address == "local":
        ray.init(num_cpus=max(workers, 1), **kw)
    else:
        ray.init(address=address, **kw)


def run_on_ray(jobs: list[str], cfg_json: str, workers: int, address: str, run: Callable[[str, str], str],
               close: Callable[[], None], env_vars: dict[str, str] | None = None) -> Iterator[str]:
    """Round-robin JSON jobs over `workers` actors (each calls run(job, cfg_json)); yield each result
    as soon as it is ready. Each actor sets `env_vars` in its process first (e.g. a VM's --vm-memory)."""
    import ray

    _connect(address, workers)

    @ray.remote(num_cpus=1, max_restarts=1)
    class EpisodeWorker:
        """Holds one environment for its lifetime (created lazily by the first episode)."""

        def __init__(self, env: dict[str, str]) -> None:
            os.environ.update(env)

        def run(self, job: str, cfg_json: str) -> str:
            return run(job, cfg_json)

        def close(self) -> None:
            close()

    actors = [EpisodeWorker.remote(dict(env_vars or {})) for _ in range(max(1, min(workers, len(jobs) or 1)))]
    queue = list(jobs)
    running: dict = {}
    try:
        for actor in actors:
            if queue:
                running[actor.run.remote(queue.pop(0), cfg_json)] = actor
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                actor = running.pop(ref)
                yield ray.get(ref)
                if queue:
                    running[actor.run.remote(queue.pop(0), cfg_json)] = actor
    finally:
        ray.get([a.close.remote() for a in actors], timeout=60)
        for a in actors:
            ray.kill(a)
