"""Action primitives on a real Chromium page: type, select a span, slider, scroll-to-find, combo box, drag."""

from __future__ import annotations

import pytest

from cua.env import make_env
from skills.primitives import (
    choose_from_combo,
    drag,
    scroll_until_visible,
    select_span,
    set_slider,
    type_into,
    type_into_steps,
)

PAGE = """<!doctype html><html><head><title>Primitives</title></head><body style="margin:0">
<input id="f" aria-label="Name" value="old text" style="position:absolute;left:20px;top:20px;width:200px">
<input id="r" type="range" aria-label="Volume" min="0" max="10" value="7" style="position:absolute;left:20px;top:60px">
<button id="c" role="combobox" aria-label="Color" onclick="document.getElementById('lb').style.display='block'"
  style="position:absolute;left:20px;top:100px">Color</button>
<div id="lb" role="listbox" style="display:none;position:absolute;left:20px;top:130px">
  <div role="option" onclick="pick(this)">Red</div><div role="option" onclick="pick(this)">Green</div></div>
<div id="src" role="button" aria-label="Card" style="position:absolute;left:300px;top:20px;width:60px;height:40px;background:#acf">Card</div>
<div id="dst" role="region" aria-label="Bin" style="position:absolute;left:500px;top:20px;width:120px;height:120px;border:2px dashed">Bin</div>
<div style="position:absolute;top:2400px;left:20px"><button>Far Away</button></div>
<script>
function pick(o){document.getElementById('c').textContent=o.textContent;document.getElementById('lb').style.display='none'}
let dragging=false;
document.getElementById('src').addEventListener('mousedown',()=>{dragging=true});
document.addEventListener('mouseup',e=>{if(!dragging)return;dragging=false;
  const b=document.getElementById('dst').getBoundingClientRect();
  if(e.clientX>=b.left&&e.clientX<=b.right&&e.clientY>=b.top&&e.clientY<=b.bottom)document.title='dropped'});
</script></body></html>"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    page = tmp_path_factory.mktemp("prim") / "p.html"
    page.write_text(PAGE)
    e = make_env(f"browser:file://{page}", sources="dom", size=(800, 600))
    yield e
    e.close()


def test_type_into_and_select_span(env):
    env.reset()
    assert type_into(env, "Name", "hello world").ok
    assert env.evaluate("() => document.getElementById('f').value") == "hello world"
    assert select_span(env, "Name", 6, 11).ok
    sel = env.evaluate("() => { const f = document.getElementById('f'); return [f.selectionStart, f.selectionEnd] }")
    assert sel == [6, 11]
    assert not select_span(env, "Name", 5, 2).ok


def test_set_slider_and_combo(env):
    env.reset()
    assert set_slider(env, "Volume", 3).ok
    assert env.evaluate("() => document.getElementById('r').value") == "3"
    res = choose_from_combo(env, "Color", "Green")
    assert res.ok, res.error
    assert env.evaluate("() => document.getElementById('c').textContent") == "Green"
    bad = choose_from_combo(env, "Color", "Purple")
    assert not bad.ok and "Purple" in bad.error


def test_scroll_until_visible_and_drag(env):
    env.reset()
    res = scroll_until_visible(env, "Far Away", dy=5, max_scrolls=30)
    assert res.ok, res.error
    env.reset()
    miss = scroll_until_visible(env, "Not On This Page", dy=10, max_scrolls=5)
    assert not miss.ok and "did not appear" in miss.error
    env.reset()
    res = drag(env, "Card", "Bin")
    assert res.ok, res.error
    assert env.evaluate("() => document.title") == "dropped"


def test_type_into_steps_have_placeholders():
    steps = type_into_steps("dialog:Find/text:", "{text}")
    assert steps[0]["target"]["signature"] == "dialog:Find/text:" and steps[-1] == {"kind": "type", "text": "{text}"}
