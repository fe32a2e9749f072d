"""`cua vm build|start|stop|list|ssh`: VM images from Debian and the VMs cua runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cua.cli.common import console


def register(app: typer.Typer) -> None:
    vm_app = typer.Typer(help="VM images (built from Debian) and running VMs (QEMU/KVM).", no_args_is_help=True)
    app.add_typer(vm_app, name="vm")

    @vm_app.command("build")
    def build(
        apps: Annotated[str, typer.Option(help="Comma-separated Debian packages of the apps to install, or "
                                                "`osworld` (OSWorld's apps and metrics; a guest that runs its tasks).")]
        = "mousepad",
        name: Annotated[str | None, typer.Option(help="Image name (the cache folder is NAME-KEY); default "
                                                      "cua-guest, or cua-osworld for --apps osworld.")] = None,
        cache: Annotated[Path | None, typer.Option(help="Image cache (default ~/.cache/cua/images).")] = None,
    ) -> None:
        """Build (or reuse, when its inputs did not change) a bootable Debian desktop image with the guest.

        Example: cua vm build --apps mousepad   (or: cua vm build --apps osworld, then --env vm:cua-osworld)
        """
        from vm.image.build import DEFAULT_CACHE, BuildError, build_image

        try:
            img = build_image([a.strip() for a in apps.split(",") if a.strip()], name, cache or DEFAULT_CACHE,
                              say=console.print)
        except BuildError as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(1) from None
        print(json.dumps(img.manifest()))

    @vm_app.command("start")
    def start(
        image: Annotated[str, typer.Argument(help="Image name (from `cua vm build`) or folder.")] = "cua-guest",
        name: Annotated[str, typer.Option(help="A name for this VM.")] = "vm1",
        memory: Annotated[int, typer.Option(min=256, help="Memory in MiB.")] = 1024,
        cpus: Annotated[int, typer.Option(min=1, max=16, help="vCPUs.")] = 1,
    ) -> None:
        """Boot a VM in the background; prints its remote: env and token file.

        Example: cua vm start cua-guest --name vm1 && CUA_TOKEN=$(cat ~/.cache/cua/vms/vm1.token) cua observe --env remote:URL
        """
        from cua.env.base import EnvError
        from vm.image.fleet import start as start_vm

        try:
            st = start_vm(image, name, memory_mb=memory, cpus=cpus)
        except EnvError as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(1) from None
        console.print(f"VM {name} ready: --env {st['env']} with CUA_TOKEN from {st['token_file']}")
        print(json.dumps(st))

    @vm_app.command("stop")
    def stop(name: Annotated[str, typer.Argument(help="The VM's name.")]) -> None:
        """Stop a VM started with `cua vm start` (its overlay is removed).

        Example: cua vm stop vm1
        """
        from vm.image.fleet import stop as stop_vm

        if not stop_vm(name):
            console.print(f"[bold red]error:[/] no running VM named {name!r}; `cua vm list` shows them")
            raise typer.Exit(1)

    @vm_app.command("list")
    def list_(json_out: Annotated[bool, typer.Option("--json", help="One JSON object per VM.")] = False) -> None:
        """Running VMs started with `cua vm start`.

        Example: cua vm list
        """
        from vm.image.fleet import list_vms

        for st in list_vms():
            print(json.dumps(st) if json_out else f"{st['name']}\t{st['env']}\tkvm={st['kvm']}\t{st['image']}")

    @vm_app.command("ssh", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def ssh(ctx: typer.Context, name: Annotated[str, typer.Argument(help="The VM's name.")] = "vm1") -> None:
        """Log into a VM started with `cua vm start` as root over ssh (its own key; the guest's host key is
        pinned), or run a command there.

        Example: cua vm ssh vm1 -- uname -a
        """
        import os

        from cua.env.base import EnvError
        from vm.image.fleet import ssh_command

        try:
            argv = ssh_command(name, list(ctx.args))
        except EnvError as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(1) from None
        os.execvp(argv[0], argv)
