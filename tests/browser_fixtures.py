"""Shared fixtures for the browser tests: a local page server and the pages it serves."""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

INDEX = """<!doctype html><html><head><title>Test page</title><style>
body { margin: 0; font: 16px sans-serif; }
#go { position: absolute; left: 100px; top: 100px; width: 120px; height: 40px; }
#off { position: absolute; left: 10px; top: 3000px; }
#cover-me { position: absolute; left: 400px; top: 100px; width: 100px; height: 30px; }
#overlay { position: absolute; left: 390px; top: 90px; width: 140px; height: 60px; background: #ccc; }
#frame { position: absolute; left: 600px; top: 300px; width: 300px; height: 150px; border: 5px solid black; }
#host { position: absolute; left: 100px; top: 300px; }
#form { position: absolute; left: 100px; top: 180px; }
#xframe { position: absolute; left: 600px; top: 500px; width: 300px; height: 120px; border: 0; }
</style></head><body>
<button id="go" onclick="this.textContent = 'Clicked'">Press me</button>
<div id="form">
  <input type="checkbox" id="agree" checked><label for="agree">I agree</label>
  <button id="nope" disabled>Disabled one</button>
  <input id="name" type="text" aria-label="Your name">
  <a id="next" href="page2.html">Next page</a>
  <a id="tab" href="page2.html" target="_blank">New tab</a>
  <button id="load" onclick="fetch('/slow').then(r => r.text()).then(t => { this.textContent = t; })">Load</button>
</div>
<button id="gone" style="display:none">Hidden display</button>
<button id="invis" style="visibility:hidden">Hidden visibility</button>
<button id="clear" style="opacity:0">Hidden opacity</button>
<button id="off">Far below</button>
<button id="cover-me">Covered</button>
<div id="overlay"></div>
<div id="host"></div>
<iframe id="frame" src="inner.html"></iframe>
<iframe id="xframe" src="about:blank"></iframe>
<script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
// the same server under another host name: a cross-origin frame
document.getElementById('xframe').src = location.href.replace('127.0.0.1', 'localhost').replace('index.html', 'inner.html');
root.innerHTML = '<button id="sb" style="margin: 20px 0 0 30px; width: 90px; height: 30px">Shadow button</button>';
</script>
</body></html>"""

INNER = """<!doctype html><html><body style="margin:0">
<button id="ib" style="position:absolute; left: 40px; top: 50px; width: 110px; height: 30px"
 onclick="this.textContent='Frame clicked'">Frame button</button></body></html>"""

PAGE2 = """<!doctype html><html><head><title>Second</title></head><body><h1>Second page</h1></body></html>"""

# 30k+ nodes, built in the page so the file stays small.
BIG = """<!doctype html><html><head><title>Big</title></head><body><div id="root"></div><script>
const root = document.getElementById('root'); const parts = [];
for (let i = 0; i < 10000; i++) parts.push('<div><span>item ' + i + '</span><button>b' + i + '</button></div>');
root.innerHTML = parts.join('');
</script></body></html>"""

PAGES = {"index.html": INDEX, "inner.html": INNER, "page2.html": PAGE2, "big.html": BIG}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/slow"):  # a slow API: the settle wait must cover it
            time.sleep(0.4)
            body = b"loaded"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


@contextmanager
def page_server(root: Path) -> Iterator[str]:
    """Serve PAGES from `root` on 127.0.0.1; yields the base URL (ends with '/')."""
    for name, text in PAGES.items():
        (root / name).write_text(text)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@contextmanager
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers (the page never loads)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/never.html"
    finally:
        sock.close()


def pid_alive(pid: int) -> bool:
    """True when the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
