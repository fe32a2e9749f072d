"""The model options `cua run` and `cua eval` share: one definition, one validation, one options dict."""

from __future__ import annotations

from pathlib import Path

import typer

from cua.cli.common import fail

MODEL_OPT = typer.Option("none", "--model", "-m",
                         help="openai:MODEL | anthropic:MODEL | scripted:FILE | none (skills only)")
COMPUTER_TOOL_OPT = typer.Option("auto", "--computer-tool", help="Computer-use protocol version: auto (the model's "
                                 "default) or e.g. computer, computer_use_preview, computer_20250124 (README: Models).")
NO_THREAD_OPT = typer.Option(False, "--no-thread", help="Resend the conversation each turn instead of chaining it "
                             "on the server (for endpoints without stored responses).")
KEEP_IMAGES_OPT = typer.Option(3, "--keep-images", min=1, help="Screenshots kept in a resent conversation; older "
                               "ones become a placeholder.")
GROUNDER_OPT = typer.Option("perception", "--grounder", help="Turns a planner's described targets into points: "
                            "perception (ours) or openai:MODEL (UI-TARS, GTA1, OS-Atlas, UGround...; "
                            "CUA_GROUNDER_BASE_URL picks its server).")
ALLOW_JS_OPT = typer.Option(False, "--allow-js", help="Anthropic browser toolset: offer javascript_exec (each call "
                            "still confirmed; --yes approves).")
UPLOAD_DIR_OPT = typer.Option(None, "--upload-dir", help="Anthropic browser toolset: the one directory file uploads "
                              "may read from (none without it).")
ALLOW_URL_OPT = typer.Option([], "--allow-url", help="Anthropic browser toolset: a URL prefix navigation may reach "
                             "besides the start page's site (repeatable).")
GUI_FAMILY_OPT = typer.Option("auto", "--gui-family", help="Open GUI model family of openai:MODEL: auto (from the "
                              "name), ui-tars-1.5, ui-tars-2, qwen2.5-vl, qwen3-vl, opencua...")


def model_options(model: str, computer_tool: str, no_thread: bool, keep_images: int, grounder: str,
                  allow_js: bool, upload_dir: Path | None, allow_url: list[str], gui_family: str) -> dict:
    """Check the model options together (exit 2 naming the bad one) and return the model_options dict."""
    from cua.models.base import ModelError, parse_model_spec
    from cua.models.grounder import make_grounder
    from cua.models.gui_families import family_for
    from cua.models.protocols import choose

    try:
        kind, name = parse_model_spec(model)
        if kind in ("openai", "anthropic"):
            choose(kind, name, computer_tool)
        make_grounder(grounder)
        family_for("", gui_family)
    except (ValueError, ModelError) as e:
        fail(str(e), code=2)
    return {"computer_tool": computer_tool, "thread": not no_thread, "keep_images": keep_images,
            "gui_family": gui_family, "allow_js": allow_js, "upload_dir": str(upload_dir) if upload_dir else None,
            "allow_urls": allow_url}
