"""OSWorld's getters (`get_<type>` in desktop_env/evaluators/getters): what the evaluator compares.

Each takes the Runtime and the getter's config and returns what OSWorld's returns (a local file
path, a string, a dict...), so the metric functions receive the same values. GETTERS maps OSWorld's
`type` to the function; adding a getter is adding one decorated function.
"""

from __future__ import annotations

import os
import shutil
import time
import zipfile
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from cua.eval.osworld import active_tab, chrome, site_scrapers  # noqa: F401 - their @getter functions register
from cua.eval.osworld import assets
from cua.eval.osworld.a11y_xml import NS, osworld_xml, tree_xml
from cua.eval.osworld.errors import Skip
from cua.eval.osworld.registry import GETTERS, getter
from cua.eval.osworld.relative_time import rule_relative_time
from cua.eval.osworld.runtime import Runtime



def _many(config: dict) -> tuple[list, list, set[int]]:
    if config.get("multi", False):
        return list(config["path"]), list(config["dest"]), set(config.get("gives", [0]))
    return [config["path"]], [config["dest"]], set(config.get("gives", [0]))


def _give(paths: list) -> Any:
    return paths[0] if len(paths) == 1 else paths


@getter("vm_file")
def vm_file(rt: Runtime, config: dict) -> Any:
    """Files from the desktop into the cache dir; a missing one gives None (as OSWorld's)."""
    paths, dests, gives = _many(config)
    if not config.get("multi", False) and config.get("time_suffix", False):
        fmt = config.get("time_format", "%Y%m%d_%H%M%S")
        stem, ext = os.path.splitext(dests[0])
        dests = [f"{stem}_{datetime.now().strftime(fmt)}{ext}"]
    out: list[str | None] = []
    for i, (p, d) in enumerate(zip(paths, dests)):
        data = rt.read_file(p)
        if data is not None:
            (rt.cache_dir / d).write_bytes(data)
        if i in gives:
            out.append(str(rt.cache_dir / d) if data is not None else None)
    return _give(out)


@getter("cloud_file")
def cloud_file(rt: Runtime, config: dict) -> Any:
    """Expected files, from the asset cache (OSWorld downloads them at evaluation time)."""
    paths, dests, gives = _many(config)
    out = []
    for i, (url, d) in enumerate(zip(paths, dests)):
        local = rt.cache_dir / d
        if not local.exists():
            shutil.copyfile(assets.resolve(rt.assets, url), local)
        if i in gives:
            out.append(str(local))
    return _give(out)


@getter("cache_file")
def cache_file(rt: Runtime, config: dict) -> Any:
    p = rt.cache_dir / config["path"]
    if not p.exists():
        raise FileNotFoundError(p)
    return str(p)


@getter("content_from_vm_file")
def content_from_vm_file(rt: Runtime, config: dict) -> Any:
    path = vm_file(rt, {"path": config["path"], "dest": os.path.basename(config["path"])})
    if config["file_type"] != "xlsx":
        raise NotImplementedError(f"File type {config['file_type']} not supported")
    if config["file_content"] == "last_row":
        import pandas as pd

        return pd.read_excel(path).iloc[-1].astype(str).tolist()
    return None


@getter("rule")
def rule(rt: Runtime, config: dict) -> Any:
    return config["rules"]


GETTERS["rule_relativeTime"] = lambda rt, config: rule_relative_time(config)


@getter("time_diff_range")
def time_diff_range(rt: Runtime, config: dict) -> Any:
    return config.get("diff_range_in_minutes")


@getter("vm_command_line")
def vm_command_line(rt: Runtime, config: dict) -> Any:
    return rt.run(config["command"], config.get("shell", False))["output"]


@getter("vm_command_error")
def vm_command_error(rt: Runtime, config: dict) -> Any:
    return rt.run(config["command"], config.get("shell", False))["error"]


@getter("vm_terminal_output")
def vm_terminal_output(rt: Runtime, config: dict) -> Any:
    """The text of the terminal on screen, read from the accessibility tree (as OSWorld's server does)."""
    xml = _full_tree(rt)
    if xml is not None:  # the server's query: the focused terminal of gnome-terminal's active window
        from xml.etree import ElementTree as ET

        st = f"{{{NS['st']}}}"
        found = [t for app in ET.fromstring(xml).iter("application") if app.get("name") == "gnome-terminal-server"
                 for frame in app.findall("frame") if frame.get(st + "active") == "true"
                 for t in frame.iter("terminal") if t.get(st + "focused") == "true"]
        return found[0].text.rstrip() if len(found) == 1 and found[0].text is not None else None
    obs = rt.env.observe()
    texts = [e.value or e.name for e in obs.elements if e.source == "a11y" and e.role.lower() == "terminal"]
    return texts[0] if texts else None


def _tree(path: Path) -> dict:
    if path.is_dir():
        return {"name": path.name, "type": "directory",
                "children": [_tree(c) for c in sorted(path.iterdir())]}
    return {"name": path.name, "type": "file"}


@getter("list_directory")
def list_directory(rt: Runtime, config: dict) -> Any:
    p = rt.path(config["path"])
    return _tree(p) if p.exists() else None


@getter("vm_screen_size")
def vm_screen_size(rt: Runtime, config: dict) -> Any:
    w, h = rt.screen_size
    return {"width": w, "height": h}


@getter("vm_window_size")
def vm_window_size(rt: Runtime, config: dict) -> Any:
    ids = rt.xdotool("search", "--onlyvisible", "--class", config["app_class_name"]).split()
    if not ids:
        return None
    geo = dict(line.split("=", 1) for line in rt.xdotool("getwindowgeometry", "--shell", ids[0]).split() if "=" in line)
    return {"width": int(geo.get("WIDTH", 0)), "height": int(geo.get("HEIGHT", 0))}


@getter("vm_wallpaper")
def vm_wallpaper(rt: Runtime, config: dict) -> Any:
    """The desktop background image file (GNOME's picture-uri setting); an empty file when none is set."""
    dest = rt.cache_dir / config["dest"]
    uri = rt.run(["gsettings", "get", "org.gnome.desktop.background", "picture-uri"])["output"].strip().strip("'")
    data = rt.read_file(uri.removeprefix("file://")) if uri else None
    dest.write_bytes(data or b"")
    return str(dest)


def _full_tree(rt: Runtime) -> str | None:
    """OSWorld's whole-hierarchy XML when the env reads AT-SPI here (a sandbox or this desktop), else None."""
    reader = getattr(rt.env, "reader", None)
    if reader is None:
        return None
    return osworld_xml(reader().tree())


@getter("accessibility_tree")
def accessibility_tree(rt: Runtime, *args: Any) -> Any:
    return _full_tree(rt) or tree_xml(rt.env.observe())


@getter("vlc_playing_info")
def vlc_playing_info(rt: Runtime, config: dict) -> Any:
    """VLC's HTTP interface status.xml (the vlc shim starts VLC with it on this episode's port)."""
    import httpx

    try:
        r = httpx.get(f"http://127.0.0.1:{rt.vlc_port}/requests/status.xml", auth=("", "password"), timeout=10)
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    dest = rt.cache_dir / config["dest"]
    dest.write_bytes(r.content)
    return str(dest)


def _config_file(rt: Runtime, path: str, dest: str) -> str | None:
    data = rt.read_file(path)
    if not data:
        return None
    (rt.cache_dir / dest).write_bytes(data)
    return str(rt.cache_dir / dest)


@getter("vlc_config")
def vlc_config(rt: Runtime, config: dict) -> Any:
    return _config_file(rt, "~/.config/vlc/vlcrc", config["dest"])


@getter("gimp_config_file")
def gimp_config_file(rt: Runtime, config: dict) -> Any:
    return _config_file(rt, f"~/.config/GIMP/2.10/{config['file_name']}", config["dest"])


@getter("default_video_player")
def default_video_player(rt: Runtime, config: dict) -> Any:
    kinds = ["3gp", "3gpp", "3gpp2", "avi", "divx", "dv", "fli", "flv", "mp2t", "mp4", "mp4v-es", "mpeg",
             "mpeg-system", "msvideo", "ogg", "quicktime", "vnd.divx", "vnd.mpegurl", "vnd.rn-realvideo", "webm",
             "x-anim", "x-avi", "x-flc", "x-fli", "x-flv", "x-m4v", "x-matroska", "x-mpeg", "x-mpeg-system",
             "x-mpeg2", "x-ms-asf", "x-ms-asf-plugin", "x-ms-asx", "x-ms-wm", "x-ms-wmv", "x-ms-wmx", "x-ms-wvx",
             "x-msvideo", "x-nsv", "x-ogm", "x-theora"]
    apps = [a for k in kinds if (a := rt.run(["xdg-mime", "query", "default", f"video/{k}"])["output"])]
    return Counter(apps).most_common(1)[0][0] if apps else "unknown"


@getter("shortcuts_on_desktop")
def shortcuts_on_desktop(rt: Runtime, config: dict) -> Any:
    desk = rt.path("~/Desktop")
    files = sorted(desk.glob("*.desktop")) if desk.is_dir() else []
    return {f.name: f.read_text(errors="replace") for f in files}


@getter("vscode_config")
def vscode_config(rt: Runtime, config: dict) -> Any:
    """Runs a VS Code command (ctrl+shift+p, its name, enter), then reads the file it writes."""
    rt.xdotool("key", "ctrl+shift+p")
    rt.xdotool("type", "--delay", "20", config["vscode_extension_command"])
    rt.xdotool("key", "Return")
    time.sleep(1.0)
    return vm_file(rt, {"path": config["path"], "dest": config["dest"]})


_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def _slide_media(rt: Runtime, config: dict, kind: str, rel_id: str | None) -> Any:
    """The file a slide's relationship of `kind` points to: extracted from the pptx, or (an absolute
    file:// target) fetched from the desktop, as OSWorld's impress getters do."""
    pptx = vm_file(rt, {"path": config["ppt_file_path"], "dest": os.path.basename(config["ppt_file_path"])})
    n = int(config["slide_index"]) + 1
    with zipfile.ZipFile(pptx) as z:
        rels = f"ppt/slides/_rels/slide{n}.xml.rels"
        if rels not in z.namelist():
            return None
        for rel in ET.fromstring(z.read(rels)).findall(f"{_REL}Relationship"):
            if kind in rel.attrib["Type"] and (rel_id is None or rel.attrib["Id"] == rel_id):
                target = rel.attrib["Target"]
                if target.startswith(".."):
                    inner = os.path.normpath(os.path.join("ppt/slides", target)).replace("\\", "/")
                    z.extract(inner, os.path.dirname(pptx))
                    return os.path.join(os.path.dirname(pptx), inner)
                return vm_file(rt, {"path": target.removeprefix("file://"), "dest": config["dest"]})
    return None


@getter("audio_in_slide")
def audio_in_slide(rt: Runtime, config: dict) -> Any:
    return _slide_media(rt, config, "audio", None)


@getter("background_image_in_slide")
def background_image_in_slide(rt: Runtime, config: dict) -> Any:
    pptx = vm_file(rt, {"path": config["ppt_file_path"], "dest": os.path.basename(config["ppt_file_path"])})
    slide = f"ppt/slides/slide{int(config['slide_index']) + 1}.xml"
    with zipfile.ZipFile(pptx) as z:
        if slide not in z.namelist():
            return None
        root = ET.fromstring(z.read(slide))
    image_id = next((b.attrib.get(f"{_R}embed") for bg in root.iter(f"{_P}bgPr") for b in bg.iter(f"{_A}blip")), None)
    return None if image_id is None else _slide_media(rt, config, "image", image_id)


@getter("googledrive_file")
def googledrive_file(rt: Runtime, config: dict) -> Any:
    raise Skip("needs a Google account")
