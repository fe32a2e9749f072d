"""RemoteEnv's transport against a real uvicorn guest on 127.0.0.1: retries, reconnection, bounded errors."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn

from cua.actions import parse_action
from cua.env.base import EnvError
from cua.env.remote import RemoteEnv
from tests.guest_fixtures import free_port
from vm.guest.app import GuestConfig, create_app

TOKEN = "client-test-token-0123456789abcdef"


class Server:
    """uvicorn in a thread, serving a guest whose environment fails to start (counted)."""

    def __init__(self, port: int, counter: list[int]):
        def broken_env():
            counter.append(1)
            raise RuntimeError("display went away")

        app = create_app(GuestConfig(token=TOKEN, env_factory=broken_env))
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    timeout_keep_alive=30))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:  # noqa: PYI034
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def test_reconnects_after_the_guest_restarts():
    port, calls = free_port(), []
    with Server(port, calls):
        env = RemoteEnv(f"http://127.0.0.1:{port}", token=TOKEN, retries=3)
        assert env.health()["ok"] is True
    with pytest.raises(EnvError, match=rf"127\.0\.0\.1:{port} is unreachable"):
        env.health()  # the guest is down: a clear error, not a hang
    with Server(port, calls):
        assert env.health()["ok"] is True  # same client object, fresh connection
    env.close()


def test_server_errors_are_retried_for_reads_only():
    port, calls = free_port(), []
    with Server(port, calls), RemoteEnv(f"http://127.0.0.1:{port}", token=TOKEN, retries=2) as env:
        with pytest.raises(EnvError, match="503.*display went away"):
            env.observe()
        assert len(calls) == 3  # GET: first try + 2 retries
        calls.clear()
        with pytest.raises(EnvError, match="503"):
            env.act(parse_action('key("enter")'))
        assert len(calls) == 1  # POST /act is never repeated: it may have run


def test_bad_urls_and_missing_tokens_are_clear(tmp_path, monkeypatch):
    with pytest.raises(EnvError, match="must start with http"):
        RemoteEnv("127.0.0.1:8765", token=TOKEN)
    monkeypatch.delenv("CUA_TOKEN", raising=False)
    monkeypatch.setenv("CUA_TOKEN_FILE", str(tmp_path / "missing"))
    with pytest.raises(EnvError, match="no token.*CUA_TOKEN"):
        RemoteEnv("http://127.0.0.1:9", check=False)
    with pytest.raises(EnvError, match="argument list"):
        RemoteEnv("http://127.0.0.1:9", token=TOKEN, check=False).exec("ls -l")


def test_healthcheck_module(monkeypatch):
    from vm.guest.healthcheck import main

    port = free_port()
    monkeypatch.setenv("CUA_TOKEN", TOKEN)
    assert main(["--port", str(port)]) == 1  # nothing listening
    with Server(port, []):
        assert main(["--port", str(port)]) == 0
        monkeypatch.setenv("CUA_TOKEN", "wrong-token-0123456789abcdef")
        assert main(["--port", str(port)]) == 1
