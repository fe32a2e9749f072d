"""OSWorld's OS metrics: GNOME settings, time zone, files moved, clipboard."""

from __future__ import annotations

import ast


def check_gnome_favorite_apps(apps_str: str, rule):
    """gsettings' favorite-apps list equals rule["expected"] as a set of the same length. OSWorld
    eval()s the gsettings output; we parse it as a Python literal (ast.literal_eval), which reads every
    list gsettings prints."""
    apps = ast.literal_eval(apps_str)
    want = rule["expected"]
    if len(apps) != len(want):
        return 0
    return 1 if set(apps) == set(want) else 0


def is_utc_0(timedatectl_output):
    return 1 if timedatectl_output.split("\n")[3].endswith("+0000)") else 0


def check_text_enlarged(scaling_factor_str):
    return 1 if float(scaling_factor_str) > 1.0 else 0


def check_moved_jpgs(directory_list, rule):
    moved = [node["name"] for node in directory_list["children"]]
    want = rule["expected"]
    if len(moved) != len(want):
        return 0
    return 1 if set(moved) == set(want) else 0


def is_in_vm_clickboard(config, terminal_output):
    want = config["expected"]
    if not isinstance(want, list):
        return 1 if want in terminal_output else 0
    return 1 if all(w in terminal_output for w in want) else 0
