"""`cua tasks check`: can each OSWorld task run here, and if not, the true reason.

Status per task, first that applies: `unsupported: <what>` (a step, getter or metric cua lacks),
`needs-google` (googledrive/login steps or getters), `needs-app APP` (an app not installed here),
`needs-root` (sudo, or writing outside the user's home), `needs-network` (live websites, package
installs, or downloads not in the asset cache), else `ok`.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel

from cua.eval.osworld import assets
from cua.eval.osworld.chrome import SITE_SCRAPERS
from cua.eval.osworld.getters import GETTERS
from cua.eval.osworld.metrics import METRICS
from cua.eval.osworld.spec import OSWorldTask
from cua.eval.osworld.steps import STEPS

# OSWorld's app (a command, a related_apps / domain name) -> the binary that provides it here
APP_BINARY = {"google-chrome": "chromium", "chrome": "chromium", "chromium": "chromium",
              "libreoffice": "libreoffice", "soffice": "libreoffice", "libreoffice_calc": "libreoffice",
              "libreoffice_writer": "libreoffice", "libreoffice_impress": "libreoffice", "gimp": "gimp",
              "vlc": "vlc", "thunderbird": "thunderbird", "/usr/bin/thunderbird": "thunderbird",
              "code": "code", "vs_code": "code", "vscode": "code", "nautilus": "nautilus",
              "gnome-terminal": "gnome-terminal", "gedit": "gedit"}
APP_NAME = {"code": "VS Code", "libreoffice": "LibreOffice", "chromium": "Chromium",
            "gnome-shell": "a GNOME session (its settings, as OSWorld's VM snapshot has them)",
            "systemd": "a systemd-booted system (timedatectl)", "totem": "GNOME Videos as the default video player"}
GOOGLE = {"googledrive", "login"}
NETWORK_CMD = re.compile(r"\b(apt(-get)?\s+(update|install)|pip3?\s+install|wget|curl|git\s+clone|snap\s+install)\b")
OFFICE = re.compile(r"\.(xlsx|xls|ods|csv|docx|doc|odt|pptx|ppt|odp)$", re.I)


class Check(BaseModel):
    task_id: str
    domain: str
    status: str
    reason: str = ""

    @property
    def kind(self) -> str:
        """ok | needs-network | needs-app | needs-google | needs-root | unsupported"""
        return self.status.split(" ")[0].split(":")[0]


def _commands(task: OSWorldTask) -> Iterator[tuple[str, str]]:
    """(step type, command text) of every command-running step and getter."""
    for _, s in task.steps():
        cmd = s.parameters.get("command")
        if s.type in ("launch", "execute", "command") and cmd:
            yield s.type, cmd if isinstance(cmd, str) else " ".join(map(str, cmd))
    for g in task.getters():
        if g.get("type") in ("vm_command_line", "vm_command_error") and g.get("command"):
            cmd = g["command"]
            yield "getter", cmd if isinstance(cmd, str) else " ".join(map(str, cmd))


def needed_apps(task: OSWorldTask) -> list[str]:
    apps: list[str] = []
    for kind, cmd in _commands(task):
        head = cmd.split()[0] if cmd.split() else ""
        if kind == "launch" and head in APP_BINARY:
            apps.append(APP_BINARY[head])
        elif re.search(r"(^|[;&|]\s*)(libreoffice|soffice)\b", cmd):
            apps.append("libreoffice")
        elif re.search(r"(^|[;&|\n]\s*)gnome-terminal\b", cmd):
            apps.append("gnome-terminal")
        if re.search(r"\btimedatectl\b", cmd):
            apps.append("systemd")
        if re.search(r"\b(pulseaudio|pactl)\b", cmd):
            apps.append("pulseaudio")
        if re.search(r"\bgsettings\b", cmd):  # GNOME's settings as OSWorld's VM snapshot has them
            apps.append("gnome-shell")
    for _, s in task.steps():
        if s.type == "open" and OFFICE.search(str(s.parameters.get("path", ""))):
            apps.append("libreoffice")
        if s.type.startswith("chrome_") or s.type == "update_browse_history":
            apps.append("chromium")
        if s.type in ("activate_window", "close_window") and str(s.parameters.get("window_name", "")).endswith(" - gedit"):
            apps.append("gedit")  # OSWorld's Ubuntu opens text files in gedit
    for g in task.getters():
        t = str(g.get("type"))
        if t == "vlc_playing_info":
            apps.append("vlc")
        elif t == "vscode_config":
            apps.append("code")
        elif t == "default_video_player":  # the task starts from GNOME Videos as the default player
            apps.append("totem")
    for name in [task.domain, *task.related_apps]:
        if name.lower() in APP_BINARY:
            apps.append(APP_BINARY[name.lower()])
    return list(dict.fromkeys(apps))


def _unsupported(task: OSWorldTask) -> str | None:
    for where, s in task.steps():
        if s.type not in STEPS:
            return f"{where} step {s.type}"
    for g in task.getters():
        if str(g.get("type")) not in GETTERS:
            return f"getter {g.get('type')}"
    for func, *_ in task.evaluator.metrics():
        if func not in METRICS and func != "infeasible":  # infeasible: scored from the agent's verdict
            return f"metric {func}"
    return None


def _network(task: OSWorldTask, cache: Path | None) -> str | None:
    for _kind, cmd in _commands(task):
        if NETWORK_CMD.search(cmd):
            return f"installs from the internet: {cmd[:80]}"
    for g in task.getters():
        if g.get("type") in SITE_SCRAPERS or g.get("type") in ("page_info", "pdf_from_url"):
            return f"getter {g.get('type')} reads a live website"
    for _, s in task.steps():
        urls = s.parameters.get("urls_to_open") or []
        if s.type == "launch":
            urls = [c for c in (s.parameters.get("command") or []) if isinstance(c, str)]
        live = [u for u in urls if re.match(r"https?://(?!(localhost|127\.0\.0\.1)[:/])", u)]
        if live:
            return f"opens {live[0]}"
    missing = [u for u in assets.task_urls(task) if cache is None or not assets.cache_path(cache, u).is_file()]
    if missing:
        return f"downloads {len(missing)} file(s) not in the asset cache, e.g. {missing[0]}"
    return None


def _root(task: OSWorldTask) -> str | None:
    for _, cmd in _commands(task):
        if re.search(r"\bsudo\b", cmd):
            return f"runs sudo: {cmd[:80]}"
        if re.search(r"(?<![\w.])/home/(?!user\b)\w+", cmd):
            return f"writes outside the user's home: {cmd[:80]}"
    return None


LIBREOFFICE_GTK3 = "/usr/lib/libreoffice/program/libvclplug_gtk3lo.so"


def installed(app: str) -> str | None:
    """Where APP is; systemd counts when it booted this system."""
    if app == "systemd":
        return "/run/systemd/system" if Path("/run/systemd/system").is_dir() else None
    if app == "vlc" and os.geteuid() == 0:  # "VLC is not supposed to be run as root. Sorry."
        return None
    if app == "libreoffice" and not Path(LIBREOFFICE_GTK3).is_file():
        return None
    return shutil.which(app)


def _why_missing(app: str) -> str:
    if app == "vlc" and os.geteuid() == 0 and shutil.which("vlc"):
        return "needs VLC run as a non-root user (VLC refuses to run as root)"
    if app == "libreoffice" and shutil.which("libreoffice"):
        return ("needs LibreOffice's GTK 3 look, as on OSWorld's VM (apt-get install libreoffice-gtk3, or "
                "make osworld-apps): its own X11 look has no accessibility tree and other menus")
    if app in ("gnome-shell", "systemd", "totem"):  # parts of OSWorld's Ubuntu VM, not programs to install
        return f"needs {APP_NAME[app]}"
    return f"needs {APP_NAME.get(app, app)} (not on PATH)"


def check_task(task: OSWorldTask, cache: Path | None = None,
               have: Callable[[str], str | None] = installed) -> Check:
    def out(status: str, reason: str = "") -> Check:
        return Check(task_id=task.id, domain=task.domain, status=status, reason=reason)

    what = _unsupported(task)
    if what:
        return out(f"unsupported: {what}", what)
    if any(s.type in GOOGLE for _, s in task.steps()) or any(g.get("type") == "googledrive_file"
                                                              for g in task.getters()):
        return out("needs-google", "needs a Google account")
    missing = [a for a in needed_apps(task) if not have(a)]
    if missing:
        return out(f"needs-app {missing[0]}", _why_missing(missing[0]))
    why = _root(task)
    if why:
        return out("needs-root", why)
    why = _network(task, cache)
    if why:
        return out("needs-network", why)
    return out("ok")


def skip_reason(c: Check, online: bool = False) -> str | None:
    """Why a task is skipped at run time, or None to run it. Live websites and package installs run
    only `online`; a download missing from the cache is left to the download step, which skips the
    task naming its URL (`asset missing: URL`)."""
    if c.kind in ("needs-google", "needs-app", "needs-root"):
        return c.reason
    if c.kind == "needs-network" and not c.reason.startswith("downloads") and not online:
        return f"needs the internet: {c.reason} (run with --online where it is reachable)"
    return None
