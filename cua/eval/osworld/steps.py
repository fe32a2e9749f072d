"""OSWorld's set-up and post-config steps (`_<type>_setup` in desktop_env/controllers/setup.py), on a Runtime.

Adding a step type is adding one function to STEPS. Where OSWorld sleeps a fixed time (5 s before
every Chrome connection, after every reset), these wait for the thing itself, with a bound.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cua.eval.osworld import assets, chrome
from cua.eval.osworld.errors import Skip, StepError
from cua.eval.osworld.runtime import Runtime


OFFICE = {".xlsx", ".xls", ".ods", ".csv", ".docx", ".doc", ".odt", ".pptx", ".ppt", ".odp", ".rtf"}
WINDOW_NAMES = {"Google Chrome": "Chromium"}  # OSWorld's window titles -> ours

StepFn = Callable[..., None]
STEPS: dict[str, StepFn] = {}


def step(name: str) -> Callable[[StepFn], StepFn]:
    def register(fn: StepFn) -> StepFn:
        STEPS[name] = fn
        return fn
    return register


def run_steps(rt: Runtime, steps: list, where: str) -> None:
    for i, s in enumerate(steps):
        fn = STEPS.get(s.type)
        if fn is None:
            raise StepError(f"{where}[{i}]: unsupported step type {s.type!r}")
        try:
            fn(rt, **s.parameters)
        except (Skip, assets.AssetMissing):
            raise
        except StepError as e:
            raise StepError(f"{where}[{i}] {s.type}: {e}") from None
        except TypeError as e:
            raise StepError(f"{where}[{i}] {s.type}: bad parameters: {e}") from None


def _screen_vars(rt: Runtime, command: Any) -> Any:
    w, h = rt.screen_size
    subs = {"{CLIENT_PASSWORD}": "password", "{SCREEN_WIDTH_HALF}": str(w // 2), "{SCREEN_HEIGHT_HALF}": str(h // 2),
            "{SCREEN_WIDTH}": str(w), "{SCREEN_HEIGHT}": str(h)}

    def sub(s: str) -> str:
        for k, v in subs.items():
            s = s.replace(k, v)
        return s
    return sub(command) if isinstance(command, str) else [sub(str(c)) for c in command]


def wait_window(rt: Runtime, name: str, timeout: float, by_class: bool = False) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        ids = rt.xdotool("search", "--onlyvisible", "--class" if by_class else "--name", name).split()
        if ids or time.monotonic() > deadline:
            return ids
        time.sleep(0.1)


@step("download")
def download(rt: Runtime, files: list[dict]) -> None:
    for f in files:
        url, path = f.get("url", ""), f.get("path", "")
        if not url or not path:
            raise StepError(f"download needs url and path, got {f!r}")
        src = assets.resolve(rt.assets, url)
        dest = rt.path(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)


@step("open")
def open_file(rt: Runtime, path: str, timeout: float = 60) -> None:
    p = rt.path(path)
    if not p.exists():
        raise StepError(f"no file {p} to open")
    if p.suffix.lower() in OFFICE:
        if not shutil.which("libreoffice"):
            raise Skip("needs LibreOffice (make osworld-apps)")
        rt.launch(["libreoffice", "--norestore", str(p)])
    else:
        rt.launch(["xdg-open", str(p)])
    title = p.name if p.is_file() else p.name or str(p)
    if not wait_window(rt, _regex(title), timeout):
        raise StepError(f"no window showing {p.name} within {timeout:.0f}s")


def _regex(text: str) -> str:
    return re.escape(text)


@step("launch")
def launch(rt: Runtime, command: str | list[str], shell: bool = False) -> None:
    if not command:
        raise StepError("empty command")
    argv = rt.argv(command, shell)
    if shell or shutil.which(argv[0], path=rt.proc_env.get("PATH")):
        rt.launch(command, shell)
    else:
        raise Skip(f"needs {Path(argv[0]).name} (not installed here)")
    head = Path(argv[0]).name
    if head.startswith("google-chrome"):
        chrome.wait_cdp(rt, 30)


@step("execute")
def execute(rt: Runtime, command: str | list[str], stdout: str = "", stderr: str = "", shell: bool = False,
            until: dict | None = None) -> None:
    if not command:
        raise StepError("empty command")
    command = _screen_vars(rt, command)
    until = until or {}
    deadline = time.monotonic() + 60
    while True:
        r = rt.run(command, shell)
        if stdout:
            (rt.cache_dir / stdout).write_text(r["output"])
        if stderr:
            (rt.cache_dir / stderr).write_text(r["error"])
        done = not until or ("returncode" in until and r["returncode"] == until["returncode"]) \
            or ("stdout" in until and until["stdout"] in r["output"]) \
            or ("stderr" in until and until["stderr"] in r["error"])
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.3)


@step("command")
def command(rt: Runtime, command: str | list[str], **kw: Any) -> None:
    execute(rt, command, **kw)


@step("sleep")
def sleep(rt: Runtime, seconds: float) -> None:
    time.sleep(float(seconds))


def _windows(rt: Runtime, window_name: str, strict: bool, by_class: bool) -> list[str]:
    name = WINDOW_NAMES.get(window_name, window_name)
    pattern = f"^{_regex(name)}$" if strict else _regex(name)
    return wait_window(rt, pattern, 5, by_class)


@step("activate_window")
def activate_window(rt: Runtime, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    for wid in _windows(rt, window_name, strict, by_class)[:1]:
        rt.xdotool("windowactivate", "--sync", wid)


@step("close_window")
def close_window(rt: Runtime, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    for wid in _windows(rt, window_name, strict, by_class)[:1]:
        rt.xdotool("windowclose", wid)


@step("googledrive")
def googledrive(rt: Runtime, **_: Any) -> None:
    raise Skip("needs a Google account")


@step("login")
def login(rt: Runtime, **_: Any) -> None:
    raise Skip("needs a Google account")


STEPS.update(chrome_open_tabs=chrome.open_tabs, chrome_close_tabs=chrome.close_tabs,
             update_browse_history=chrome.update_browse_history)
