"""Every status each guest route can answer, written into the OpenAPI document (schemathesis checks them)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel


class Problem(BaseModel):
    detail: str


# Any route: bad framing (400), no/wrong token (401), body over the limit (413), wrong tokens slowed (429),
# a bug (500). The middleware answers these before the route runs.
EVERY = {400: "Malformed request framing (both Content-Length and Transfer-Encoding, bad Content-Length)",
         401: "Missing or wrong bearer token", 413: "Request body over the size limit",
         429: "Too many wrong tokens from this address (the right token is always served)",
         500: "Internal error (no traceback is sent)"}
ENV = {409: "The environment refused (no display, a recording already running, cancelled...)",
       503: "The environment failed or is not available"}
OSWORLD_OFF = "OSWorld tasks are off (they run commands: start the guest with --allow-exec)"
FILES = {403: "File access is off, or the path is a symlink / hard link / not permitted",
         404: "No such file or directory under the root"}
BY_PATH: dict[str, dict[int, str]] = {
    "/screenshot": ENV, "/observe": ENV, "/reset": ENV, "/act": ENV, "/a11y": ENV, "/windows": ENV,
    "/recording/start": ENV, "/recording/stop": ENV,
    "/recording": {409: "Recording is off on this guest (--no-recordings)"},
    "/recording/{session}/archive": {400: "Not a session name", 404: "No finished recording of that name",
                                     409: "Recording is off, or that session is still being recorded"},
    "/files": FILES, "/files/list": FILES,
    "/exec": {403: "Exec is off (start the guest with --allow-exec)"},
    "/osworld/assets/{name}": {400: "Not a cache file name", 403: OSWORLD_OFF},
    "/osworld/setup": {**ENV, 403: OSWORLD_OFF, 409: "A set-up step failed, or the environment refused"},
    "/osworld/score": {**ENV, 403: OSWORLD_OFF, 409: "No task set up, or the evaluator failed"},
    "/osworld/close": {**ENV, 403: OSWORLD_OFF},
}


# Stateful links for schemathesis: what one call returns feeds the next (operation ids are function names).
LINKS: dict[str, dict] = {
    "write_file": {"ReadBack": {"operationId": "read_file", "parameters": {"path": "$response.body#/path"}},
                   "ListRoot": {"operationId": "list_files"}},
    "recording_start": {"Stop": {"operationId": "recording_stop"}},
    "reset": {"Act": {"operationId": "act"}},
}


def document_statuses(app: FastAPI) -> None:
    """Add the statuses above (with the {"detail": ...} body) to every route's OpenAPI responses, name each
    operation after its function and add the stateful links."""
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        route.operation_id = route.name
        if route.name in LINKS:
            route.responses.setdefault(200, {})["links"] = LINKS[route.name]
        for status, text in {**EVERY, **BY_PATH.get(route.path, {})}.items():
            route.responses.setdefault(status, {"model": Problem, "description": text})
