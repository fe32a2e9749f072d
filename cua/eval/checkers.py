"""Checkers: one registered function each, combined with all / any / not.

A checker returns True (passed) or False (failed). Anything it raises is a checker *error*, scored
apart from a failure. Adding a checker is adding one decorated function.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cua.perception.elements import Observation, UIElement


class CheckerError(RuntimeError):
    """A checker could not decide (bad spec, missing env capability, crashed command)."""


@dataclass
class CheckContext:
    """What a checker may look at: the env, its final observation, its files and commands."""

    env: Any
    home: Path | None = None
    proc_env: dict[str, str] | None = None
    miniwob: Any = None
    _obs: Observation | None = field(default=None, repr=False)
    _state: list[UIElement] | None = field(default=None, repr=False)
    details: list[str] = field(default_factory=list)

    def observation(self) -> Observation:
        if self._obs is None:
            self._obs = self.env.observe()
        return self._obs

    def forget(self) -> None:
        """Read the screen afresh at the next check (the agent acted since)."""
        self._obs, self._state = None, None

    def state_elements(self) -> list[UIElement]:
        """The elements checked: an env's whole showing tree where it has one (a desktop's windows behind
        an open dialog included: "the toolbar is shown" holds while the Open dialog is up), else those
        of an observation."""
        if self._state is None:
            whole = getattr(self.env, "state_elements", None)
            self._state = whole() if callable(whole) else self.observation().elements
        return self._state

    def path(self, p: str) -> Path:
        if self.home is None:
            raise CheckerError("this environment exposes no file system to check; use a sandbox env")
        p = p.replace("{home}", str(self.home))
        path = Path(p.removeprefix("~/"))
        return path if path.is_absolute() else self.home / path

    def run(self, argv: list[str], timeout: float = 10) -> str:
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            raise CheckerError(f"command must be a non-empty argument list, got {argv!r}")
        exec_remote = getattr(self.env, "exec", None)
        if self.proc_env is None and callable(exec_remote):
            return str(exec_remote(argv, timeout=timeout).get("stdout", ""))
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.proc_env,
                               cwd=self.home)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CheckerError(f"command {argv!r} failed to run: {e}") from None
        return r.stdout


CHECKERS: dict[str, Callable[..., bool]] = {}


def checker(name: str):
    def register(fn: Callable[..., bool]) -> Callable[..., bool]:
        CHECKERS[name] = fn
        return fn
    return register


def _match(el: UIElement, role: str | None, name: str | None, exact: bool) -> bool:
    if role and role.lower() not in el.role.lower():
        return False
    if name is None:
        return True
    return el.name == name if exact else name.lower() in el.name.lower()


def _find(ctx: CheckContext, role: str | None, name: str | None, exact: bool = False) -> list[UIElement]:
    return [e for e in ctx.state_elements() if e.source in ("a11y", "dom") and _match(e, role, name, exact)]


@checker("a11y_exists")
def a11y_exists(ctx: CheckContext, role: str | None = None, name: str | None = None, exact: bool = False) -> bool:
    """An accessible (or DOM) element with this role / name is on screen."""
    return bool(_find(ctx, role, name, exact))


@checker("a11y_state")
def a11y_state(ctx: CheckContext, state: str, role: str | None = None, name: str | None = None,
               exact: bool = False, present: bool = True) -> bool:
    """Such an element has (present=true) or lacks a state: checked, focused, expanded..."""
    return any((state in e.states) == present for e in _find(ctx, role, name, exact))


@checker("a11y_text")
def a11y_text(ctx: CheckContext, contains: str | None = None, equals: str | None = None,
              role: str | None = None, name: str | None = None) -> bool:
    """Such an element's text value contains / equals the given text."""
    for e in _find(ctx, role, name):
        text = e.value if e.value is not None else e.name
        if (equals is not None and text == equals) or (contains is not None and contains in (text or "")):
            return True
    return False


@checker("window_title")
def window_title(ctx: CheckContext, contains: str | None = None, equals: str | None = None,
                 regex: str | None = None) -> bool:
    t = ctx.observation().window_title
    return bool((equals is not None and t == equals) or (contains is not None and contains in t)
                or (regex is not None and re.search(regex, t)))


@checker("file_exists")
def file_exists(ctx: CheckContext, path: str) -> bool:
    return ctx.path(path).exists()


@checker("file_contains")
def file_contains(ctx: CheckContext, path: str, text: str) -> bool:
    p = ctx.path(path)
    return p.exists() and text in p.read_text(errors="replace")


@checker("file_equals")
def file_equals(ctx: CheckContext, path: str, content: str, strip: bool = True) -> bool:
    p = ctx.path(path)
    if not p.exists():
        return False
    got = p.read_text(errors="replace")
    return (got.strip() == content.strip()) if strip else got == content


@checker("command_output")
def command_output(ctx: CheckContext, command: list[str], contains: str | None = None,
                   equals: str | None = None, timeout: float = 10) -> bool:
    out = ctx.run(command, timeout)
    return bool((equals is not None and out.strip() == equals.strip()) or (contains is not None and contains in out))


@checker("js")
def js(ctx: CheckContext, expression: str, expected: Any = True) -> bool:
    """A JavaScript expression evaluated in the page (browser env) equals `expected`."""
    evaluate = getattr(ctx.env, "evaluate", None)
    if not callable(evaluate):
        raise CheckerError("the js checker needs the browser env (browser:URL)")
    return evaluate(expression) == expected


@checker("miniwob_reward")
def miniwob_reward(ctx: CheckContext, min: float = 1.0) -> bool:
    """The MiniWoB++ page's own reward reaches `min`."""
    if ctx.miniwob is None:
        raise CheckerError("miniwob_reward needs a `miniwob` setup step that starts the task page")
    r = ctx.miniwob.reward(ctx.env)
    ctx.details.append(f"reward={r:.3f}")
    return r >= min


@checker("ocr_contains")
def ocr_contains(ctx: CheckContext, text: str) -> bool:
    """OCR of the final screen contains the text (case-insensitive)."""
    from cua.perception.ocr import ocr

    words = " ".join(e.name for e in ocr(ctx.observation().image()))
    return text.lower() in words.lower()


def validate_tree(tree: Any) -> None:
    """Raise ValueError naming the first unknown checker or malformed node."""
    if not isinstance(tree, dict):
        raise ValueError(f"a checker must be a mapping, got {tree!r}")
    if "all" in tree or "any" in tree:
        items = tree.get("all", tree.get("any"))
        if not isinstance(items, list) or not items:
            raise ValueError("`all` / `any` need a non-empty list of checkers")
        for t in items:
            validate_tree(t)
    elif "not" in tree:
        validate_tree(tree["not"])
    elif tree.get("type") not in CHECKERS:
        raise ValueError(f"unknown checker type {tree.get('type')!r}; known: {', '.join(sorted(CHECKERS))}")


def evaluate(tree: dict[str, Any], ctx: CheckContext) -> bool:
    """Evaluate a checker tree; raise CheckerError if any checker errors."""
    if "all" in tree:
        return all([evaluate(t, ctx) for t in tree["all"]])  # evaluate every one: details for the report
    if "any" in tree:
        return any([evaluate(t, ctx) for t in tree["any"]])
    if "not" in tree:
        return not evaluate(tree["not"], ctx)
    params = {k: v for k, v in tree.items() if k != "type"}
    try:
        ok = bool(CHECKERS[tree["type"]](ctx, **params))
    except CheckerError:
        raise
    except TypeError as e:
        raise CheckerError(f"checker {tree['type']!r}: bad parameters {params}: {e}") from None
    except Exception as e:  # a checker that crashes scores the task as an error, not a failure
        raise CheckerError(f"checker {tree['type']!r} raised {type(e).__name__}: {e}") from None
    ctx.details.append(f"{tree['type']}: {'pass' if ok else 'fail'}")
    return ok


@checker("osworld")
def osworld(ctx: CheckContext) -> bool:
    """Marks an OSWorld task: the runner scores it with OSWorld's evaluator (cua.eval.osworld), not here."""
    raise CheckerError("an OSWorld task is scored by its own evaluator (cua.eval.osworld), not a checker tree")
