"""VMs: image build (cold and cached), boot to ready, reset by snapshot vs by reboot vs the sandbox's reset,
memory per VM, screenshots/s through the guest, eval throughput with 1 and 2 VMs.

Goals: reset by snapshot <= 3 s and >= 10x faster than a reboot, both measured in the same run.

The full run boots the cached image (`cua vm build` makes it; --cold also times a build from scratch into a
temporary cache, which needs root). --quick must not add minutes to `make test`, so it boots no desktop: it
times the cached build check, then starts QEMU on the image, saves its state while the kernel boots and
restores it (the same machinery as a reset, without the wait for the guest's answer), beside the sandbox's
reset. It reports `skipped: no image` only when the image is not cached and cannot be built here.

Example: python benchmarks/vm_bench.py --quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._results import BenchRun, row  # noqa: E402

GOAL_RESET_S = 3.0


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def _image(cold: bool, res: dict, say) -> Path | None:
    """The image folder; times the cached build check (and a cold build with --cold)."""
    from vm.image.build import BuildError, build_image

    if cold:
        with tempfile.TemporaryDirectory(prefix="cua-cold-") as tmp:
            t0 = time.monotonic()
            build_image(["mousepad"], cache=Path(tmp), say=say)
            res["cold_build_s"] = round(time.monotonic() - t0, 1)
    t0 = time.monotonic()
    try:
        img = build_image(["mousepad"], say=say)
    except BuildError as e:
        res["skipped"] = f"no image: {e}"
        return None
    res["cached_build_s"] = round(time.monotonic() - t0, 3)
    return img.disk.parent


def _sandbox_resets(n: int) -> list[float]:
    from cua.env import make_env

    out = []
    with make_env("sandbox:mousepad", sources="a11y") as env:
        env.observe()
        for _ in range(n):
            t0 = time.monotonic()
            env.reset()
            out.append(time.monotonic() - t0)
    return out


def _quick_restore(image: Path, n: int) -> dict:
    """QEMU's save and restore on the real image while its kernel boots (no guest answer awaited)."""
    from cua.env.vm import VMEnv

    class EarlyState(VMEnv):
        booted = False

        def _wait_guest(self, deadline: float) -> None:
            if not self.booted:  # the boot: long enough for the kernel to run, not for the desktop
                time.sleep(3.0)
                self.booted = True

        def _wait_desktop(self, deadline: float) -> None:
            pass  # no desktop is awaited in the quick run

    env = EarlyState(str(image))
    try:
        out = []
        for _ in range(n):
            t0 = time.monotonic()
            env._restore()
            out.append(time.monotonic() - t0)
        return {"qemu_restore_s": out, "save_s": env.timings.get("save_s"), **env.memory_kb()}
    finally:
        env.close()


def _boot_more(image: Path, n: int) -> list:
    """`n` more VMs of the image, booted in parallel threads (closed again if one fails)."""
    from cua.env.vm import VMEnv

    envs: list = [None] * n
    errors: list[BaseException] = []

    def boot(i: int) -> None:
        try:
            envs[i] = VMEnv(str(image))
        except BaseException as e:  # noqa: BLE001 - raised below, after the others are closed
            errors.append(e)

    threads = [threading.Thread(target=boot, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for e in envs:
            if e is not None:
                e.close()
        raise errors[0]
    return envs


def _eval_tasks(n: int) -> list:
    """The first `n` mousepad tasks checked inside the guest (a11y checkers, no host-side set-up)."""
    from cua.eval.task import resolve_tasks

    return [t for t in resolve_tasks([str(REPO / "tasks" / "mousepad")], 1)
            if not t.setup and str(t.checkers.get("type", "")).startswith("a11y")][:n]


def _eval_throughput(envs: list, tasks: list) -> dict:
    """Reference replays of `tasks` on the booted VMs `envs`: one thread per VM takes the next task from one
    queue and runs the runner's episode on it (reset by snapshot, replay, checkers), as a `cua eval` worker
    does. The VMs are booted before the clock starts, so 1 and 2 VMs compare episodes, not boots."""
    from cua.eval.runner import EvalConfig, run_episode

    queue, results, lock = list(tasks), [], threading.Lock()

    def work(env) -> None:
        while True:
            with lock:
                if not queue:
                    return
                task = queue.pop(0)
            r = run_episode(task, env, cfg)
            with lock:
                results.append(r)

    with tempfile.TemporaryDirectory(prefix="cua-vm-eval-") as out:
        cfg = EvalConfig(env="vm:cua-guest", model="none", replay="reference", out=out,
                         env_options={"sources": "a11y"})
        load0, t0 = os.getloadavg()[0], time.monotonic()
        threads = [threading.Thread(target=work, args=(e,), name=f"vm-eval-{i}") for i, e in enumerate(envs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        secs = time.monotonic() - t0
    ok = sum(r.outcome == "success" for r in results)
    return {"vms": len(envs), "tasks": len(results), "success": ok, "seconds": round(secs, 1),
            "tasks_per_min": round(len(results) / secs * 60, 2), "load_before": round(load0, 2),
            "load_after": round(os.getloadavg()[0], 2),
            "reset_s": [r.seconds.get("reset") for r in results], "errors": [r.error for r in results if r.error][:3]}


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="no desktop boot: QEMU save/restore on the image, cached build")
    p.add_argument("--cold", action="store_true", help="also time a build from scratch (root, 4-14 min)")
    p.add_argument("--resets", type=int, default=5, help="resets by snapshot (and of the sandbox) to time")
    p.add_argument("--eval-tasks", type=int, default=6, help="tasks for eval throughput (0 skips it)")
    p.add_argument("--no-reboot", dest="reboot", action="store_false",
                   help="compare with this run's cold boot instead of a second boot by system_reset")
    p.add_argument("--eval-vms", type=int, default=2, help="VMs for the parallel eval throughput, all booted before its clock starts (1 skips it)")
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args(argv)
    console = Console(stderr=True)
    run = BenchRun("vm", a.quick, a.out)
    res: dict = {"quick": a.quick, "goal_reset_s": GOAL_RESET_S}
    image = _image(a.cold and not a.quick, res, lambda s: console.print(s))
    summary: list[dict] = []
    if image is None:
        summary.append(row("reset by snapshot", "skipped: no image", note=res["skipped"][:200]))
        console.print(f"wrote {run.write(res, summary)}")
        return 0
    n = 2 if a.quick else a.resets
    res["sandbox_reset_s"] = _sandbox_resets(n)
    if a.quick:
        q = _quick_restore(image, n)
        res.update(q)
        summary += [
            row("QEMU state restore (kernel booting, no guest wait)", _median(q["qemu_restore_s"]),
                _median(res["sandbox_reset_s"]), "sandbox reset", unit="s"),
            row("cached image build", res["cached_build_s"], unit="s"),
        ]
    else:
        from cua.env.vm import VMEnv

        t0 = time.monotonic()
        env = VMEnv(str(image))
        try:
            res["boot_to_ready_s"] = round(time.monotonic() - t0, 1)
            res["timings"] = {k: round(v, 2) for k, v in env.timings.items()}
            res["memory"] = env.memory_kb()
            ram = env.root / "ram"
            res["memory"]["ram_file_kb"] = os.stat(ram).st_blocks // 2 if ram.exists() else None
            env.observe()
            snap, snap_obs = [], []
            for _ in range(a.resets):
                t0 = time.monotonic()
                env._restore()
                snap.append(time.monotonic() - t0)
                env.observe()
                snap_obs.append(time.monotonic() - t0)
            res["snapshot_reset_s"], res["snapshot_reset_with_observe_s"] = snap, snap_obs
            t0, shots = time.monotonic(), 0
            while shots < 5 or time.monotonic() - t0 < 8:
                env.screenshot_bytes()
                shots += 1
            res["screenshots_per_s"] = round(shots / (time.monotonic() - t0), 2)
            if a.reboot:
                res["reboot_reset_s"] = round(env.reboot(), 1)
                env.reset()  # back to the saved desktop for the episodes
            if a.eval_tasks:
                tasks = _eval_tasks(a.eval_tasks)
                res["eval"] = [_eval_throughput([env], tasks)]
                if a.eval_vms > 1:  # more VMs booted side by side (the first one idles meanwhile), then the same tasks
                    t0 = time.monotonic()
                    more = _boot_more(image, a.eval_vms - 1)
                    res["extra_boot_s"] = round(time.monotonic() - t0, 1)
                    try:
                        res["eval"].append(_eval_throughput([env, *more], tasks))
                    finally:
                        for m in more:
                            m.close()
        finally:
            env.close()
        reboot = res.get("reboot_reset_s")
        base = (reboot, "reboot (system_reset until the guest answers)") if reboot else \
            (res["timings"]["boot_s"], "cold boot to the guest's answer, same run (--no-reboot)")
        summary += [
            row("reset by snapshot", _median(snap), base[0], base[1], unit="s",
                note=f"goal <= {GOAL_RESET_S} s and >= 10x faster than a reboot"),
            row("reset by snapshot, then observe", _median(snap_obs), _median(res["sandbox_reset_s"]),
                "sandbox reset", unit="s"),
            row("boot to ready", res["boot_to_ready_s"], unit="s", note="TCG" if not env.kvm else "KVM"),
            row("QEMU memory (PSS)", round(res["memory"].get("pss_kb", 0) / 1024), unit="MiB"),
            row("screenshots through the guest", res["screenshots_per_s"], unit="/s"),
            row("cached image build", res["cached_build_s"], res.get("cold_build_s"), "cold build", unit="s"),
        ]
        one = next((ev["tasks_per_min"] for ev in res.get("eval", []) if ev["vms"] == 1), None)
        for ev in res.get("eval", []):
            summary.append(row(f"eval throughput, {ev['vms']} VM(s)", ev["tasks_per_min"],
                               one if ev["vms"] > 1 else None, "1 VM, same tasks" if ev["vms"] > 1 else "",
                               unit="tasks/min", note=f"{ev['success']}/{ev['tasks']} passed; booted VMs; load "
                               f"{ev['load_before']}->{ev['load_after']}"))
    table = Table(title=f"vm bench{' (quick)' if a.quick else ''}")
    for c in ("metric", "value", "baseline", "ratio"):
        table.add_column(c)
    for s in summary:
        table.add_row(s["metric"], f"{s['value']} {s['unit']}", f"{s['baseline']} ({s['baseline_name']})"
                      if s["baseline"] is not None else "", str(s["ratio"] or ""))
    Console().print(table)
    console.print(f"wrote {run.write(res, summary)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
