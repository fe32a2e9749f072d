"""Outcomes of running an OSWorld task that are not a score: a step error, or a skip with its reason."""

from __future__ import annotations


class StepError(RuntimeError):
    """A set-up or post-config step that could not run; the episode scores as an error."""


class Skip(Exception):  # noqa: N818 - an outcome, not an error
    """The task cannot run here (a Google account, an app, root, an asset); the outcome is `skipped`."""
