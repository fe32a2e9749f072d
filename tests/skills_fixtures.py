"""A small web app with menus, a dialog, a clock, a modal trap, a crash and an endless list, for explorer tests."""

from __future__ import annotations

from pathlib import Path

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
