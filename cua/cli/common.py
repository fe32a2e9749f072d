"""What every `cua` verb shares: the error console, `fail`, and the common options."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console
from typer.core import TyperGroup

console = Console(stderr=True)
ENV_OPT = typer.Option("sandbox:mousepad", "--env", "-e", help="sandbox:APP | desktop | browser:URL | remote:URL")
SKILLS_OPT = typer.Option(Path("skills.db"), "--skills", "-s", help="Skill library (SQLite file).")


def fail(message: str, code: int = 1) -> None:
    """Print one clear error line and exit non-zero."""
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def _use_ca(value: Path | None) -> Path | None:
    """--ca FILE: trust this certificate (PEM) for https:// guests; RemoteEnv reads it from $CUA_CA."""
    if value is not None:
        path = value.expanduser()
        if not path.is_file():
            raise typer.BadParameter(f"{value} is not a file; give the guest's certificate (PEM), the cert.pem "
                                     "that `cua serve --tls-cert cert.pem` uses")
        os.environ["CUA_CA"] = str(path.resolve())  # child processes (eval workers) inherit it
    return value


def _ca_option():
    """The `--ca` click option, built by typer from a one-parameter command."""
    carrier = typer.Typer()

    @carrier.command()
    def carrier_cmd(ca: Path | None = typer.Option(
            None, "--ca", metavar="FILE", callback=_use_ca,
            help="Certificate (PEM) to trust for an https:// remote:URL guest, e.g. a self-signed one "
                 "(same as CUA_CA=FILE).")) -> None:
        """Only carries the option."""

    option = typer.main.get_command(carrier).params[0]
    option.expose_value = False  # the command never sees it: the callback set $CUA_CA
    return option


def _vm_option(flag: str, var: str, low: int, high: int, default: int, text: str):
    """`--vm-memory` / `--vm-cpus`: a vm:IMAGE env's size; like --ca, set in the environment (CUA_VM_*) so
    every VM this command starts, in worker processes and Ray actors too, gets it."""
    def use(value: int | None) -> int | None:
        if value is not None:
            if not low <= value <= high:
                raise typer.BadParameter(f"{value} is out of range; give {low}..{high}, e.g. {flag} {default}")
            os.environ[var] = str(value)
        return value

    carrier = typer.Typer()

    @carrier.command()
    def carrier_cmd(v: int | None = typer.Option(None, flag, callback=use, help=f"{text} (default {default}).")
                    ) -> None:
        """Only carries the option."""

    option = typer.main.get_command(carrier).params[0]
    option.name = var.lower()  # distinct per option (click keys values by name)
    option.expose_value = False
    return option


def add_ca_option(command) -> None:
    """Give every command that takes `--env` (and so `remote:URL` or `vm:IMAGE`) `--ca FILE`, `--vm-memory`
    and `--vm-cpus`."""
    for sub in getattr(command, "commands", {}).values():
        add_ca_option(sub)
    params = getattr(command, "params", [])
    if any("--env" in getattr(p, "opts", ()) for p in params) and not any("--ca" in p.opts for p in params):
        params.append(_ca_option())
        params.append(_vm_option("--vm-memory", "CUA_VM_MEMORY", 256, 65536, 1024,
                                 "Memory in MiB of each VM a vm:IMAGE env boots"))
        params.append(_vm_option("--vm-cpus", "CUA_VM_CPUS", 1, 64, 1, "vCPUs of each VM a vm:IMAGE env boots"))


class CuaGroup(TyperGroup):
    """The root `cua` group: adds `--ca` to every command with `--env` once all verbs are registered."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        add_ca_option(self)
