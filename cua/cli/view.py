"""`cua mcp` (an environment for MCP clients) and `cua view` (a live view of an environment in a browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cua.cli.common import console


def register(app: typer.Typer) -> None:
    @app.command()
    def view(
        env: Annotated[str, typer.Option("--env", "-e", help="sandbox:APP | desktop | remote:URL (a `cua serve` "
                                         "guest) | vm:IMAGE")] = "sandbox:mousepad",
        takeover: Annotated[bool, typer.Option("--takeover", help="Let the viewer's mouse and keys reach the "
                                                "app (default: view only, enforced by the VNC server).")] = False,
        port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 (default: a free one).")] = None,
        token_file: Annotated[Path | None, typer.Option(help="Token file (default ~/.config/cua/token, created "
                                                        "0600); $CUA_TOKEN wins.")] = None,
    ) -> None:
        """Serve a live view (noVNC) of an environment on 127.0.0.1 until Ctrl+C; the password is the token.

        Example: cua view --env sandbox:mousepad --takeover
                 CUA_TOKEN=... cua view --env remote:http://127.0.0.1:8765   (the guest's desktop, via its /vnc)
        """
        import signal
        import time

        from cua.env import EnvError, make_env
        from cua.liveview import open_live
        from vm.guest.auth import TokenError

        def interrupt(*_: object) -> None:  # SIGTERM ends the view as Ctrl+C does: its private folder is removed
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, interrupt)
        try:
            with make_env(env) as e, open_live(e, takeover, token_file, console.print, port) as live:
                live.update(step=0, doing="watching (no agent)", outcome="-")
                console.print("Ctrl+C stops the live view")
                while True:
                    time.sleep(3600)
        except KeyboardInterrupt:
            return
        except (EnvError, TokenError) as err:
            console.print(f"[bold red]error:[/] {err}")
            raise typer.Exit(1) from None

    @app.command()
    def mcp(
        env: Annotated[str, typer.Option("--env", "-e", help="sandbox:APP | desktop | browser:URL | remote:URL")]
        = "sandbox:mousepad",
        skills: Annotated[Path | None, typer.Option(help="Skill library: each verified skill becomes a tool.")]
        = None,
        model: Annotated[str, typer.Option(help="Model for the `run` tool (none: skills only).")] = "none",
        transport: Annotated[str, typer.Option(help="stdio | http (streamable HTTP at /mcp).")] = "stdio",
        host: Annotated[str, typer.Option(help="Address for --transport http.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --transport http.")] = 8766,
        token_file: Annotated[Path | None, typer.Option(help="Bearer token file for http (default "
                                                        "~/.config/cua/token, created 0600); $CUA_TOKEN wins.")]
        = None,
        out: Annotated[Path, typer.Option(help="Where `run` writes trajectories.")] = Path("mcp-runs"),
    ) -> None:
        """MCP server: observe, act, run, skills_search, record_start/stop, and one tool per verified skill.

        Example: cua mcp --env sandbox:mousepad --skills lib.db            (stdio, for a coding assistant)
                 CUA_TOKEN=... cua mcp --transport http --port 8766          (http://127.0.0.1:8766/mcp)
        """
        from cua.mcp_server import CuaMCP, serve_http
        from vm.guest.auth import TokenError, load_or_create_token

        if transport not in ("stdio", "http"):
            console.print(f"[bold red]error:[/] --transport {transport!r}: use stdio or http")
            raise typer.Exit(2)
        if skills is not None and not skills.exists():
            console.print(f"[bold red]error:[/] skill library {str(skills)!r} does not exist; build one with "
                          "`cua explore` or leave out --skills")
            raise typer.Exit(2)
        server = CuaMCP(env, skills=skills, model=model, out=out)
        try:
            if transport == "stdio":
                server.server.run("stdio")
                return
            try:
                token, origin = load_or_create_token(token_file)
            except TokenError as e:
                console.print(f"[bold red]error:[/] {e}")
                raise typer.Exit(1) from None
            if host not in ("127.0.0.1", "localhost", "::1"):
                console.print(f"[yellow]warning:[/] binding {host}: anyone who can reach it and has the token "
                              "drives this desktop; prefer 127.0.0.1 with an SSH tunnel")
            console.print(f"MCP on http://{host}:{port}/mcp (bearer token from {origin})")
            serve_http(server, token, host, port)
        finally:
            server.close()
