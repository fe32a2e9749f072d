"""`cua tasks check` (can each task run here, and why not) and `cua osworld assets` (the offline cache)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import typer

from cua.cli.common import console, fail

tasks_app = typer.Typer(help="Task files: check what runs here.", no_args_is_help=True)
osworld_app = typer.Typer(help="OSWorld's own tasks: the offline asset cache.", no_args_is_help=True)

ASSETS_OPT = typer.Option(None, "--assets", help="Asset cache directory (default $CUA_OSWORLD_ASSETS).")
DOMAINS_OPT = typer.Option(None, "--domains", help="Comma list of OSWorld domains, e.g. chrome,os.")


def _load(paths: list[Path], domains: str | None):
    from cua.eval.osworld.spec import OSWorldError, load_path

    chosen = [d.strip() for d in domains.split(",") if d.strip()] if domains else None
    try:
        return [t for p in paths for t in load_path(p, chosen)]
    except OSWorldError as e:
        fail(str(e))


def _cache(assets: Path | None) -> Path | None:
    from cua.eval.osworld.assets import default_cache

    return assets or default_cache()


@tasks_app.command("check")
def check(
    paths: list[Path] = typer.Argument(..., help="OSWorld task files, directories, or an index (test_all.json)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per task per line."),
    assets: Path = ASSETS_OPT,
    domains: str = DOMAINS_OPT,
) -> None:
    """Load every task and report ok / needs-network / needs-app APP / needs-google / needs-root /
    unsupported: WHAT, per task, then the counts.

    Example: cua tasks check OSWorld/evaluation_examples --domains os --json
    """
    from cua.eval.osworld.check import check_task

    tasks = _load(paths, domains)
    cache = _cache(assets)
    counts: Counter[str] = Counter()
    for t in tasks:
        c = check_task(t, cache)
        counts[c.kind] += 1
        if as_json:
            print(json.dumps(c.model_dump()))
        else:
            print(f"{t.domain}/{t.id}\t{c.status}" + (f"\t{c.reason}" if c.reason and c.kind != "unsupported" else ""))
    console.print(f"{len(tasks)} tasks: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))


@osworld_app.command("assets")
def assets_cmd(
    paths: list[Path] = typer.Argument(..., help="OSWorld task files, directories, or an index."),
    assets: Path = ASSETS_OPT,
    fetch: bool = typer.Option(False, "--fetch", help="Download the missing ones (needs the internet)."),
    domains: str = DOMAINS_OPT,
) -> None:
    """List every URL the tasks download, its cache path and whether it is present (--list, the
    default); --fetch downloads the missing ones into the cache.

    Example: cua osworld assets OSWorld/evaluation_examples --assets ~/osworld-assets --fetch
    """
    from cua.eval.osworld.assets import cache_path, fetch as fetch_url, task_urls

    cache = _cache(assets)
    if cache is None:
        fail("give the cache directory: --assets DIR (or set CUA_OSWORLD_ASSETS)")
    urls = list(dict.fromkeys(u for t in _load(paths, domains) for u in task_urls(t)))
    missing = 0
    for url in urls:
        p = cache_path(cache, url)
        if fetch and not p.is_file():
            try:
                fetch_url(url, cache)
            except Exception as e:  # noqa: BLE001 - one failed URL is reported, the others go on
                console.print(f"[red]cannot fetch {url}: {e}[/red]")
        present = p.is_file()
        missing += not present
        print(f"{'present' if present else 'missing'}\t{p}\t{url}")
    console.print(f"{len(urls)} asset(s), {len(urls) - missing} present, {missing} missing in {cache}")
    if fetch and missing:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
    app.add_typer(osworld_app, name="osworld")
