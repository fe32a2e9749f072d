"""Mousepad screens for the perception benchmark: closed, a menu open, a dialog, each with AT-SPI boxes.

Taken on the sandbox env (Xvfb with its own MIT-MAGIC-COOKIE, openbox, mousepad, AT-SPI, an allow-listed
environment): no display here is open to other local users, and no API key reaches the app.
"""

from __future__ import annotations

from typing import Any


def mousepad_screens(progress: Any = None) -> dict[str, dict]:
    """{'closed' | 'menu': {'image', 'a11y'}, 'heldout': [{'name', 'image', 'a11y', 'region'}, ...]}."""
    return _env_screens()


def _env_screens() -> dict[str, dict]:
    """'closed' and 'menu' (the Search menu) for the speed part; 'heldout': the windows the vision detector
    never trained on (detect_collect.heldout_mousepad_screens), each with its region, for grounding."""
    from cua.actions import Click, Key, Target
    from cua.env import make_env
    from cua.perception.detect_collect import heldout_mousepad_screens

    out: dict[str, dict] = {}
    with make_env("sandbox:mousepad", sources="a11y") as env:
        def snap(key: str) -> None:
            obs = env.observe()
            out[key] = {"image": obs.image().copy(), "a11y": [e for e in obs.elements if e.source == "a11y"]}

        snap("closed")
        env.act(Click(target=Target(text="Search", role="menu")))
        snap("menu")
        env.act(Key(key="esc"))
        out["heldout"] = [{"name": name, "image": obs.image().copy(), "region": region,
                           "a11y": [e for e in obs.elements if e.source == "a11y"]}
                          for name, obs, region in heldout_mousepad_screens(env)]
    return out
