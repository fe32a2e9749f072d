"""The explored UI graph as a picture: states as screenshot thumbnails, transitions as labelled edges,
laid out by Graphviz `dot` (Debian's graphviz package) into an SVG the demo page embeds."""

from __future__ import annotations

import html
import shutil
import subprocess
from pathlib import Path
from typing import Any

from PIL import Image

THUMB_W = 200
MOVES = ("new_state", "known_state")  # transitions that lead somewhere else (not no_change / value_change)


class GraphError(RuntimeError):
    """The graph picture could not be drawn (no `dot`, or it failed); the message says how to fix it."""


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def edge_label(t: dict[str, Any]) -> str:
    """What was done: the control's name (from the action's target or the element signature) and the key."""
    a = t.get("action") or {}
    tgt = a.get("target") or {}
    name = tgt.get("text") or (t.get("signature") or "").rsplit(":", 1)[-1] or a.get("key") or a.get("kind", "?")
    verb = {"click": "click", "key": "press", "type": "type", "hotkey": "press"}.get(a.get("kind", ""), a.get("kind", ""))
    if a.get("kind") in ("key", "hotkey"):
        name = a.get("key") or "+".join(a.get("keys") or [])
    return f"{verb} {name}".strip()[:40]


def graph_dot(states: list[dict[str, Any]], transitions: list[dict[str, Any]], thumbs: dict[str, str]) -> str:
    """DOT source: one image node per state (its title below), one labelled edge per distinct move."""
    lines = ["digraph ui {", "  rankdir=LR; nodesep=0.35; ranksep=0.9;",
             '  node [shape=box, style=rounded, fontname="DejaVu Sans", fontsize=10, labelloc=b, imagescale=true];',
             '  edge [fontname="DejaVu Sans", fontsize=9, color="#555555"];']
    known = {s["key"] for s in states}
    for i, s in enumerate(states):
        path = s.get("path_names") or []
        label = (path[-1] if path else "start") + "\n" + (s.get("title") or "")[:40]
        attrs = [f"label={_q(label or f'state {i}')}", f"id={_q('state-' + s['key'])}"]
        if s["key"] in thumbs:
            attrs.append(f"image={_q(thumbs[s['key']])}")
            attrs.append(f"width={THUMB_W / 72 + 0.3:.2f}, height={THUMB_W * 0.66 / 72 + 0.5:.2f}")
        lines.append(f"  s{i} [{', '.join(attrs)}];")
    index = {s["key"]: i for i, s in enumerate(states)}
    seen = set()
    for t in transitions:
        if t.get("effect") not in MOVES or t.get("dst") not in known or t.get("src") not in known:
            continue
        label = edge_label(t)
        key = (t["src"], t["dst"], label)
        if key in seen or t["src"] == t["dst"]:
            continue
        seen.add(key)
        lines.append(f"  s{index[t['src']]} -> s{index[t['dst']]} [label={_q(label)}, class=transition];")
    lines.append("}")
    return "\n".join(lines)


def thumbnails(states: list[dict[str, Any]], shots: Path, out: Path) -> dict[str, str]:
    """Small PNGs of each state's screenshot under out/graph/; key -> path relative to `out`."""
    (out / "graph").mkdir(parents=True, exist_ok=True)
    got = {}
    for s in states:
        src = s.get("screenshot")
        path = Path(src) if src else None
        if path is not None and not path.is_absolute():
            path = shots / path
        if path is None or not path.exists():
            continue
        im = Image.open(path).convert("RGB")
        im.thumbnail((THUMB_W, THUMB_W))
        rel = f"graph/{s['key'].replace('~', '_')}.png"  # a value context's key: its screen's, '~', values
        im.save(out / rel)
        got[s["key"]] = rel
    return got


def render(skills_db: Path, out: Path) -> tuple[str, dict[str, int]]:
    """The inline SVG of the explored graph and its counts (nodes, edges, thumbnails)."""
    from skills.graph import UIGraph

    dot = shutil.which("dot")
    if not dot:
        raise GraphError("Graphviz `dot` is not installed: apt-get install graphviz (make setup does it)")
    graph = UIGraph(skills_db)
    try:
        keys = [r[0] for r in graph.db.execute("SELECT key FROM states ORDER BY depth, first_seen")]
        states = [s for k in keys if (s := graph.state(k)) is not None]
        transitions = graph.transitions()
    finally:
        graph.close()
    thumbs = thumbnails(states, skills_db.parent, out)
    src = graph_dot(states, transitions, thumbs)
    (out / "graph" / "ui.dot").write_text(src)
    proc = subprocess.run([dot, "-Tsvg"], input=src, capture_output=True, text=True, cwd=out, timeout=120)
    if proc.returncode != 0:
        raise GraphError(f"dot failed: {proc.stderr.strip()[-300:]}")
    svg = proc.stdout[proc.stdout.index("<svg"):]
    (out / "graph" / "ui.svg").write_text(svg.replace('xlink:href="graph/', 'xlink:href="'))  # beside its PNGs
    return svg, {"nodes": len(states), "edges": src.count(" -> "), "thumbnails": len(thumbs)}


def postconditions_html(skills_db: Path) -> str:
    """Each skill with its effect postcondition in words (or why it has none)."""
    from skills.library import SkillLibrary

    with SkillLibrary(skills_db) as lib:
        every = lib.list()
    rows = []
    for s in every:
        words = s.postcondition.describe() or "(no effect recorded: not verifiable)"
        rows.append(f'<tr class="skill" data-status="{s.status}"><td>{html.escape(s.name)}</td><td>{s.status}</td>'
                    f"<td>{s.provenance}</td><td class=\"post\">{html.escape(words)}</td></tr>")
    return ("<table><tr><th>skill</th><th>status</th><th>provenance</th><th>postcondition (what it must change)</th>"
            "</tr>" + "".join(rows) + "</table>")
