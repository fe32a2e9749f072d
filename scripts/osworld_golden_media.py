"""Golden cases: media metrics."""

from osworld_golden_cases import case, text  # noqa: F401
