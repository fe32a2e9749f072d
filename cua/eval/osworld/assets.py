"""The offline asset cache: every file an OSWorld task downloads, one file per URL under a stable name.

OSWorld fetches its set-up files and expected results from the internet at run time (config
`download`, getters `cloud_file`, `update_browse_history`'s empty history). cua never does: they come
from `--assets DIR`, filled once on a machine with internet by `cua osworld assets TASKS --fetch`.
The name of a URL's file is `<uuid5(URL)>_<basename of the URL path>`: stable, and the same URL used
by several tasks is stored once.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

from cua.eval.osworld.errors import Skip
from cua.eval.osworld.spec import OSWorldTask

HISTORY_DB_URL = ("https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/chrome/"
                  "44ee5668-ecd5-4366-a6ce-c1c9b8d4e938/history_empty.sqlite?download=true")
ASSETS_ENV = "CUA_OSWORLD_ASSETS"


class AssetMissing(Skip):
    """A URL a task needs is not in the asset cache: the task is skipped, not failed."""

    def __init__(self, url: str, cache: Path | None):
        self.url = url
        super().__init__(f"asset missing: {url}" + (f" (expected at {cache_path(cache, url)})" if cache else
                                                     " (no --assets DIR given)"))


def asset_name(url: str) -> str:
    base = os.path.basename(unquote(urlparse(url).path)) or "file"
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{re.sub(r'[^A-Za-z0-9._-]', '_', base)[:80]}"


def cache_path(cache: Path, url: str) -> Path:
    return Path(cache) / asset_name(url)


def default_cache() -> Path | None:
    v = os.environ.get(ASSETS_ENV)
    return Path(v) if v else None


def resolve(cache: Path | None, url: str) -> Path:
    """The cached file for URL; a local path or file:// URL is itself; else AssetMissing."""
    if url.startswith("file://"):
        return Path(unquote(urlparse(url).path))
    if url.startswith("/"):
        return Path(url)
    if cache is not None:
        p = cache_path(cache, url)
        if p.is_file():
            return p
    raise AssetMissing(url, cache)


def _getter_urls(g: dict) -> Iterator[str]:
    if g.get("type") == "cloud_file":
        paths = g.get("path")
        yield from (paths if isinstance(paths, list) else [paths])


def task_urls(task: OSWorldTask) -> list[str]:
    """Every URL the task's set-up, post-config and getters download, in order, without repeats."""
    urls: list[str] = []
    for _, step in task.steps():
        if step.type == "download":
            urls += [f.get("url", "") for f in step.parameters.get("files", [])]
        elif step.type == "update_browse_history":
            urls.append(HISTORY_DB_URL)
    for g in task.getters():
        urls += list(_getter_urls(g))
    return [u for i, u in enumerate(urls) if isinstance(u, str) and u.startswith("http") and u not in urls[:i]]


def fetch(url: str, cache: Path, timeout: float = 300) -> Path:
    """Download URL into the cache (atomically: a partial download never looks present)."""
    import httpx

    cache.mkdir(parents=True, exist_ok=True)
    dest = cache_path(cache, url)
    tmp = dest.with_suffix(dest.suffix + ".part")
    with httpx.stream("GET", url, follow_redirects=True, timeout=timeout) as r:
        r.raise_for_status()
        with open(tmp, "wb") as f:
            for chunk in r.iter_bytes(1 << 16):
                f.write(chunk)
    tmp.replace(dest)
    return dest
