"""For explorer tests: one exploration of a real app (`exploration`), a profile that keeps a few names
(`keeping`), and a small web app with menus, a dialog, a clock, a modal trap, a crash and an endless list."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from cua.env import make_env
from skills.explorer import Budget, Explorer, Stats
from skills.graph import UIGraph
from skills.library import SkillLibrary
from skills.profile import Profile, load_profile


class Explored(NamedTuple):
    env: Any
    lib: SkillLibrary
    graph: UIGraph
    stats: Stats


@contextmanager
def exploration(db: Path, env: str, app: str, only: str | None = None, profile: Profile | None = None,
                sources: str = "a11y", **budget: Any) -> Iterator[Explored]:
    """Explore `env` (default profile unless given; `budget`: Budget's fields) into the library at `db`,
    then close the library, the graph and the env."""
    live = make_env(env, sources=sources)
    lib, graph = SkillLibrary(db), UIGraph(db)
    try:
        ex = Explorer(live, lib, graph, profile or load_profile("default"), Budget(**budget), app=app, only=only)
        yield Explored(live, lib, graph, ex.run())
    finally:
        graph.close()
        lib.close()
        live.close()


def keeping(*names: str) -> Profile:
    """The default profile, with every control but these names (regular expressions) denied too: the
    test's exploration stays short."""
    base = load_profile("default")
    return Profile(deny=[*base.deny, rf"^(?!({'|'.join(names)})$)"], sample_text=base.sample_text)


MINI_APP = """<!doctype html><html><head><title>Mini App</title><style>
.menu{display:none;border:1px solid #888;position:absolute;background:#fff;padding:4px}
.open{display:block} #dlg,#trap{display:none;position:absolute;top:140px;left:60px;border:2px solid;padding:8px;background:#fff}
</style></head><body>
<nav role="menubar">
 <button role="menuitem" onclick="tog('file')">File</button>
 <button role="menuitem" onclick="tog('edit')">Edit</button>
 <button role="menuitem" onclick="tog('danger')">Danger</button>
</nav>
<div id="file" class="menu" role="menu" style="left:8px;top:30px">
 <button role="menuitem" onclick="closeAll();show('dlg')">Find and Replace...</button><br>
 <button role="menuitem" onclick="closeAll();document.title='Mini App - new'">New</button><br>
 <button role="menuitem" onclick="closeAll();document.body.innerHTML=''">Quit</button>
</div>
<div id="edit" class="menu" role="menu" style="left:60px;top:30px">
 <button role="menuitem" onclick="closeAll();document.body.style.background='#eef'">Tint</button><br>
 <button role="menuitem" disabled>Undo</button>
</div>
<div id="danger" class="menu" role="menu" style="left:110px;top:30px">
 <button role="menuitem" onclick="closeAll();show('trap')">Lock Screen</button><br>
 <button role="menuitem" onclick="closeAll();document.body.innerHTML=''">Crash</button><br>
 <button role="menuitem" onclick="closeAll();more()">Grow List</button>
</div>
<div id="dlg" role="dialog" aria-label="Find and Replace">
  <label>Search for <input id="q" aria-label="Search for"></label>
  <button onclick="document.getElementById('res').textContent='Found: '+document.getElementById('q').value">Find</button>
  <button onclick="hide('dlg')">Close</button>
  <div id="res"></div>
</div>
<div id="trap" role="dialog" aria-label="Locked"><p>This dialog cannot be closed.</p></div>
<p>Clock: <span id="clock" role="timer">0</span></p>
<div id="list"></div>
<script>
let n = 0; setInterval(() => { document.getElementById('clock').textContent = String(++n); }, 150);
function closeAll(){for(const m of document.querySelectorAll('.menu'))m.classList.remove('open')}
function tog(id){const o=document.getElementById(id).classList.contains('open');closeAll();if(!o)document.getElementById(id).classList.add('open')}
function show(id){document.getElementById(id).style.display='block'}
function hide(id){document.getElementById(id).style.display='none'}
function more(){const b=document.createElement('button');const k=document.querySelectorAll('#list button').length;
  b.textContent='Item '+k;b.onclick=more;document.getElementById('list').appendChild(b)}
document.addEventListener('keydown',e=>{if(e.key==='Escape'){closeAll();hide('dlg')}})
</script></body></html>
"""

MINI_PROFILE = """deny = ["^quit"]
no_descend = []
sample_text = "hello"
max_depth = 4
"""


def write_mini_app(folder: Path) -> tuple[str, Path]:
    """Write the page and its explorer profile; returns (browser ENV string, profile path)."""
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "mini.html"
    page.write_text(MINI_APP)
    prof = folder / "mini.toml"
    prof.write_text(MINI_PROFILE)
    return f"browser:file://{page}", prof
