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


@pytest.mark.parametrize("fmt,scale", [("jpeg", 1.0), ("jpeg", 0.5), ("png", 1.0), ("png", 0.5)])
def test_screen_encoding_keeps_colours_and_size(fmt, scale):
    """BGRX grabs encode to the right colours (red stays red) at the requested scale."""
    import io

    from PIL import Image

    from vm.guest.capture import encode_bgrx

    w, h = 64, 40
    px = bytearray()
    for _y in range(h):
        for x in range(w):
            px += bytes((0, 0, 255, 0)) if x < w // 2 else bytes((255, 0, 0, 0))  # B,G,R,X: red | blue
    img = Image.open(io.BytesIO(encode_bgrx((w, h), bytes(px), fmt, 90, scale))).convert("RGB")
    assert img.size == (round(w * scale), round(h * scale))
    left, right = img.getpixel((2, img.size[1] // 2)), img.getpixel((img.size[0] - 3, img.size[1] // 2))
    assert left[0] > 200 and left[2] < 60 and right[2] > 200 and right[0] < 60
