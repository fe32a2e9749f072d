"""OSWorld's evaluation (DesktopEnv.evaluate): post-config, getters, metrics combined by `conj`.

Scores as OSWorld does: an infeasible task scores 1 when the agent declared it infeasible, else 0;
a feasible task the agent declared infeasible scores 0; with `and`, the first 0 ends at 0 and the
score is the mean; with `or`, the first 1 ends at 1 and the score is the max. A result getter that
raises FileNotFoundError scores that metric 0 (OSWorld: 0 for the whole `and`); a metric that raises on
a getter's None (a config file the app never wrote) scores 0 too, where OSWorld's harness would crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cua.eval.osworld.getters import GETTERS
from cua.eval.osworld.metrics import METRICS, metrics_table
from cua.eval.osworld.runtime import Runtime
from cua.eval.osworld.spec import OSWorldTask, Step
from cua.eval.osworld.steps import run_steps


class EvaluatorError(RuntimeError):
    """The evaluator names a getter or metric cua does not have, or a metric crashed."""


def metric(name: str, table: dict[str, Callable[..., Any]] = METRICS) -> Callable[..., Any]:
    fn = table.get(name)
    if fn is None:
        raise EvaluatorError(f"unsupported metric {name!r}")
    return fn


def getter(config: dict) -> Callable[..., Any]:
    fn = GETTERS.get(str(config.get("type")))
    if fn is None:
        raise EvaluatorError(f"unsupported getter {config.get('type')!r}")
    return fn


def _missing(result: Any) -> bool:
    """A getter's None (vm_file of a file that is not there), alone or in a list."""
    return result is None or (isinstance(result, list) and any(r is None for r in result))


def mapped_steps(rt: Runtime, steps: list[Step]) -> list[Step]:
    return [Step(type=s.type, parameters=rt.map(s.parameters)) for s in steps]


def run_postconfig(task: OSWorldTask, rt: Runtime) -> None:
    run_steps(rt, mapped_steps(rt, task.evaluator.postconfig), "postconfig")


def score(task: OSWorldTask, rt: Runtime, declared_infeasible: bool, details: list[str] | None = None,
          strict: bool = False) -> float:
    """Run post-config, then the metrics; returns OSWorld's score in [0, 1] (`strict`: the reference's known
    metric bugs fixed, docs/osworld_metrics.md)."""
    details = details if details is not None else []
    run_postconfig(task, rt)
    ev = task.evaluator
    if ev.infeasible:
        details.append(f"infeasible task: agent {'declared' if declared_infeasible else 'did not declare'} it")
        return 1.0 if declared_infeasible else 0.0
    if declared_infeasible:
        details.append("the agent declared a feasible task infeasible")
        return 0.0
    results: list[float] = []
    for func, rconf, econf, options in ev.metrics():
        fn = metric(func, metrics_table(strict))
        try:
            result = getter(rconf or {})(rt, rt.map(rconf or {}))
        except FileNotFoundError as e:
            details.append(f"{func}: result file not found: {e}")
            if ev.conj == "and":
                return 0.0
            results.append(0.0)
            continue
        try:
            if isinstance(econf, dict) and econf:
                expected = getter(econf)(rt, rt.map(econf))
                value = float(fn(result, expected, **(options or {})))
            else:
                value = float(fn(result, **(options or {})))
        except (EvaluatorError, FileNotFoundError):
            raise
        except Exception as e:  # noqa: BLE001 - a metric crash is the evaluator's error, named
            if not _missing(result):
                raise EvaluatorError(f"metric {func} raised {type(e).__name__}: {e}") from None
            # the file it reads is not there (an app never wrote its config): nothing was done, 0
            details.append(f"{func} = 0 (its input is missing: {type(e).__name__} on None)")
            value = 0.0
        details.append(f"{func} = {value:g}")
        if ev.conj == "and" and value == 0.0:
            return 0.0
        if ev.conj == "or" and value == 1.0:
            return 1.0
        results.append(value)
    if not results:
        return 0.0
    return sum(results) / len(results) if ev.conj == "and" else max(results)
