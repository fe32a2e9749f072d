"""What every `cua` verb shares: the error console, `fail`, and the common options."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

console = Console(stderr=True)
ENV_OPT = typer.Option("sandbox:mousepad", "--env", "-e", help="sandbox:APP | desktop | browser:URL | remote:URL")
SKILLS_OPT = typer.Option(Path("skills.db"), "--skills", "-s", help="Skill library (SQLite file).")


def fail(message: str, code: int = 1) -> None:
    """Print one clear error line and exit non-zero."""
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)
