"""`cua serve`: run the guest server (inside a VM or container) in front of one environment."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from cua.cli.common import console


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_size(size: str | None) -> tuple[int, int] | None:
    if not size:
        return None
    try:
        w, h = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise typer.BadParameter(f"size {size!r} must look like 1280x800") from None
    return w, h


def register(app: typer.Typer) -> None:
    """Add `cua serve` to the `cua` command."""

    @app.command("serve")
    def serve(
        host: Annotated[str, typer.Option(help="Address to bind; anything but loopback exposes the guest.")]
        = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8765,
        env: Annotated[str, typer.Option("--env", "-e", help="desktop (this $DISPLAY) or sandbox:APP etc.")]
        = "desktop",
        root: Annotated[Path | None, typer.Option(help="Directory served by /files (none: no file access).")]
        = None,
        allow_exec: Annotated[bool, typer.Option("--allow-exec", help="Enable /exec (argument lists, timeout) "
                                                 "and the /osworld routes (OSWorld tasks' set-up runs commands).")]
        = False,
        osworld_assets: Annotated[Path | None, typer.Option(help="Where the host's OSWorld assets are stored "
                                                            "(default ~/.cache/cua/osworld-assets).")] = None,
        token_file: Annotated[Path | None, typer.Option(help="Token file (default ~/.config/cua/token; created "
                                                        "0600 if absent). $CUA_TOKEN wins over it.")] = None,
        sources: Annotated[str, typer.Option(help="Perception sources for the environment.")] = "auto",
        size: Annotated[str | None, typer.Option(help="Screen size for sandbox envs, e.g. 1280x800.")] = None,
        recordings: Annotated[Path | None, typer.Option(help="Directory for /recording output (default: "
                                                        "ROOT/recordings with --root, else "
                                                        "$XDG_DATA_HOME/cua/recordings, i.e. "
                                                        "~/.local/share/cua/recordings; 0700).")] = None,
        no_recordings: Annotated[bool, typer.Option("--no-recordings", help="Turn /recording off (it answers "
                                                    "409).")] = False,
        tls_cert: Annotated[Path | None, typer.Option(help="PEM certificate: serve HTTPS (with --tls-key).")] = None,
        tls_key: Annotated[Path | None, typer.Option(help="PEM private key of --tls-cert.")] = None,
        pass_env: Annotated[list[str] | None, typer.Option("--pass-env", help="Pass this variable of the "
                                                           "caller's environment into a sandbox or browser (repeatable).")]
        = None,
    ) -> None:
        """Serve one environment over HTTP with a bearer token (the guest side of --env remote:URL).

        Example: cua serve --env sandbox:mousepad --port 8765 --root ~/shared
        """
        import uvicorn

        from cua.env import EnvError, make_env
        from vm.guest.app import GuestConfig, create_app
        from vm.guest.auth import TokenError, load_or_create_token
        from vm.guest.files import FileAccessError

        try:
            token, origin = load_or_create_token(token_file)
        except TokenError as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(1) from None
        if (tls_cert is None) != (tls_key is None):
            console.print("[bold red]error:[/] --tls-cert and --tls-key go together; give both (or neither)")
            raise typer.Exit(2)
        for f in (tls_cert, tls_key):
            if f is not None and not f.is_file():
                console.print(f"[bold red]error:[/] TLS file {f} does not exist")
                raise typer.Exit(2)
        if not _is_loopback(host):
            console.print(f"[yellow]warning:[/] binding {host}: anyone who can reach it and has the token "
                          "controls this desktop; prefer 127.0.0.1 with an SSH tunnel (docs/security.md)")
            if tls_cert is None:
                console.print("[yellow]warning:[/] no TLS: the token crosses the network in plain text; pass "
                              "--tls-cert/--tls-key or use an SSH tunnel (ssh -L 8765:127.0.0.1:8765 guest)")
        options: dict = {"sources": sources}
        if pass_env and env.startswith(("sandbox", "browser")):
            options["pass_env"] = list(pass_env)
        if (wh := _parse_size(size)) is not None:
            options["size"] = wh
        from vm.guest.recording import default_recordings_dir, make_recorder

        if no_recordings and recordings is not None:
            console.print("[bold red]error:[/] --no-recordings and --recordings DIR contradict each other; give one")
            raise typer.Exit(2)
        recorder = None
        if not no_recordings:
            if recordings is None:
                recordings = root / "recordings" if root is not None else default_recordings_dir()
            recorder = make_recorder(recordings)
        try:
            cfg = GuestConfig(token=token, env_factory=lambda: make_env(env, **options), env_spec=env,
                              root=root, allow_exec=allow_exec, recorder=recorder, osworld_assets=osworld_assets)
            application = create_app(cfg)
            application.state.guest.env()  # start the environment now: fail loudly, not on first request
        except (EnvError, FileAccessError) as e:
            console.print(f"[bold red]error:[/] {e}")
            raise typer.Exit(1) from None
        from vm.guest.server import server_config

        scheme = "https" if tls_cert else "http"
        console.print(f"cua guest on {scheme}://{host}:{port} env={env} token from {origin} "
                      f"files={'off' if root is None else root} exec={'on' if allow_exec else 'off'} "
                      f"recordings={'off' if recorder is None else recorder.base}")
        uvicorn.Server(server_config(application, host, port, tls_cert, tls_key)).run()
