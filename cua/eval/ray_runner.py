"""Episodes on Ray: one actor per worker, each owning its own environment; results stream back."""

from __future__ import annotations

from collections.abc import Iterator

from cua.eval.runner import EpisodeResult, EvalConfig, episode_in_worker
from cua.eval.task import Task


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


def run_on_ray(tasks: list[Task], cfg: EvalConfig, workers: int, address: str) -> Iterator[EpisodeResult]:
    """Round-robin tasks over `workers` actors; yield each result as soon as it is ready."""
    import ray

    _connect(address, workers)

    @ray.remote(num_cpus=1, max_restarts=1)
    class EpisodeWorker:
        """Holds one environment for its lifetime (created lazily by the first episode)."""

        def run(self, task_json: str, cfg_json: str) -> str:
            return episode_in_worker(task_json, cfg_json)

        def close(self) -> None:
            from cua.eval.runner import close_worker_envs

            close_worker_envs()

    actors = [EpisodeWorker.remote() for _ in range(max(1, min(workers, len(tasks) or 1)))]
    queue = list(tasks)
    running: dict = {}
    cfg_json = cfg.model_dump_json()
    try:
        for actor in actors:
            if queue:
                running[actor.run.remote(queue.pop(0).model_dump_json(), cfg_json)] = actor
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                actor = running.pop(ref)
                yield EpisodeResult.model_validate_json(ray.get(ref))
                if queue:
                    running[actor.run.remote(queue.pop(0).model_dump_json(), cfg_json)] = actor
    finally:
        ray.get([a.close.remote() for a in actors], timeout=60)
        for a in actors:
            ray.kill(a)
