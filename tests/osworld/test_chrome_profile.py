"""OSWorld's Chrome profile getters on Preferences files as Chromium writes them.

Chromium 156 (Debian's) writes `profile.default_content_setting_values.has_migrated_local_network_access`
on its first run; OSWorld's `data_delete_automacally` only asks whether that dict exists, so doing nothing
passed chrome/99146c54 on the cua VM. The flag is Chromium's bookkeeping, not a user's setting.
"""

from __future__ import annotations

import json

import pytest

from cua.eval.osworld.getters import GETTERS


class Profile:
    """A runtime holding one Chrome Preferences file (None: the file is missing)."""

    def __init__(self, prefs: dict | None) -> None:
        self.prefs = prefs

    def read_file(self, path: str) -> bytes | None:
        assert path == "~/.config/google-chrome/Default/Preferences", path
        return None if self.prefs is None else json.dumps(self.prefs).encode()


MIGRATED = {"has_migrated_local_network_access": True}


@pytest.mark.parametrize(("prefs", "verdict"), [
    ({"profile": {"name": "Person 1", "default_content_setting_values": MIGRATED}}, "false"),  # a fresh Chromium 156
    ({"profile": {"name": "Person 1"}}, "false"),  # the Chrome OSWorld's task was written on
    ({"profile": {"default_content_setting_values": {**MIGRATED, "cookies": 4}}}, "true"),  # "clear on exit" set
    ({"profile": {"default_content_setting_values": {"notifications": 2}}}, "true"),  # any site setting, as OSWorld
    ({"profile": {"default_content_setting_values": {}}}, "true"),
    ({"browser": {}}, "Google"),  # no profile section: OSWorld's except branch
    (None, "Google"),
])
def test_data_delete_automatically_ignores_chromiums_migration_flags(prefs, verdict):
    assert GETTERS["data_delete_automacally"](Profile(prefs), {"type": "data_delete_automacally"}) == verdict
