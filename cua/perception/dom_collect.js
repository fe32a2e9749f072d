// In-page collector for cua.perception.dom: one call returns the visible interactive and
// text-bearing elements with roles (AT-SPI vocabulary), accessible names, states and
// viewport boxes. Walks open shadow roots and same-origin iframes. Bounded by a node and a
// time budget: when either runs out it returns what it has with partial=true.
(opts) => {
  const t0 = performance.now();
  const maxNodes = opts.maxNodes || 20000, maxMs = opts.maxMs || 1500, maxEls = opts.maxElements || 3000;
  const hitTestMax = opts.hitTestMax || 1500;
  // opts.base: set when run inside a cross-origin frame (offset, clip, path in the top page's terms).
  const base = opts.base || {};
  const vw = base.viewport ? base.viewport[0] : window.innerWidth;
  const vh = base.viewport ? base.viewport[1] : window.innerHeight;
  const out = [], remote = [];
  let visited = 0, partial = false, reason = null, hitTests = 0;

  const ARIA = {
    button: 'push button', link: 'link', checkbox: 'check box', radio: 'radio button',
    textbox: 'entry', searchbox: 'entry', combobox: 'combo box', listbox: 'list box',
    option: 'list item', menuitem: 'menu item', menu: 'menu', menubar: 'menu bar',
    menuitemcheckbox: 'check menu item', menuitemradio: 'radio menu item', tab: 'page tab',
    tablist: 'page tab list', slider: 'slider', spinbutton: 'spin button', switch: 'toggle button',
    heading: 'heading', dialog: 'dialog', alertdialog: 'dialog', img: 'image', treeitem: 'tree item',
    gridcell: 'table cell', cell: 'table cell', row: 'table row', columnheader: 'column header',
    progressbar: 'progress bar', tooltip: 'tool tip', alert: 'alert', status: 'status bar',
    listitem: 'list item', scrollbar: 'scroll bar', toolbar: 'tool bar', label: 'label',
    timer: 'timer', marquee: 'marquee', log: 'log', math: 'math',
  };
  const TEXT_INPUTS = new Set(['text', 'email', 'password', 'search', 'tel', 'url', 'number', 'date',
    'datetime-local', 'month', 'week', 'time', '']);
  const SEMANTIC = {FORM: 'form', NAV: 'navigation', MAIN: 'main', HEADER: 'header', FOOTER: 'footer',
    DIALOG: 'dialog', FIELDSET: 'panel', TABLE: 'table', ASIDE: 'section', SECTION: 'section'};

  // Roles whose name comes from the author only (their text is their children's), and roles
  // that are not themselves operable.
  const CONTAINERS = new Set(['list box', 'menu', 'menu bar', 'page tab list', 'tool bar', 'dialog',
    'table row', 'scroll bar', 'status bar', 'alert']);
  // Live regions: their text changes on its own, so it is their value, not their name (stable signatures).
  const LIVE = new Set(['timer', 'marquee', 'log', 'status bar', 'progress bar']);
  for (const r of LIVE) CONTAINERS.add(r);
  const PASSIVE = new Set(['heading', 'label', 'image', 'dialog', 'tool tip', 'alert', 'math', ...LIVE]);
  const INLINE = new Set(['SPAN', 'B', 'I', 'EM', 'STRONG', 'A', 'CODE', 'SMALL', 'SUB', 'SUP', 'U', 'MARK',
    'FONT', 'BR', 'ABBR', 'KBD', 'Q', 'S', 'TIME', 'LABEL', 'CITE', 'WBR']);
  const CLICK_EVENTS = ['click', 'mousedown', 'mouseup', 'dblclick'];
  const jq = window.jQuery && window.jQuery._data ? window.jQuery : null;

  function hasListener(el) { // inline/property handlers, jQuery and d3 bindings
    if (el.onclick || el.onmousedown || el.onmouseup || el.ondblclick) return true;
    if (el.__onclick || el.__onmousedown || el.__onmouseup) return true; // d3 v3
    if (Array.isArray(el.__on) && el.__on.some(h => CLICK_EVENTS.includes(h.type))) return true; // d3 v4+
    if (jq) {
      let ev = null;
      try { ev = jq._data(el, 'events'); } catch (e) { ev = null; }
      if (ev && CLICK_EVENTS.some(t => ev[t] && ev[t].some(h => !h.selector))) return true;
    }
    return false;
  }

  const clean = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n || 200);

  function roleOf(el, tag) {
    const aria = (el.getAttribute('role') || '').split(' ')[0].toLowerCase();
    if (aria && ARIA[aria]) return ARIA[aria];
    switch (tag) {
      case 'A': return el.hasAttribute('href') ? 'link' : null;
      case 'BUTTON': return 'push button';
      case 'SUMMARY': return 'toggle button';
      case 'TEXTAREA': return 'entry';
      case 'SELECT': return (el.multiple || el.size > 1) ? 'list box' : 'combo box';
      case 'OPTION': return 'list item';
      case 'LABEL': return 'label';
      case 'IMG': return 'image';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'INPUT': {
        const t = (el.getAttribute('type') || '').toLowerCase();
        if (t === 'hidden') return null;
        if (t === 'checkbox') return 'check box';
        if (t === 'radio') return 'radio button';
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image') return 'push button';
        if (t === 'range') return 'slider';
        if (t === 'password') return 'password text';
        if (t === 'file') return 'push button';
        if (t === 'color') return 'push button';
        return 'entry';
      }
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'entry';
    return null;
  }

  function byIds(root, ids) {
    return ids.split(/\s+/).map(id => {
      const n = root.getElementById ? root.getElementById(id) : null;
      return n ? n.textContent : '';
    }).join(' ');
  }

  function nameOf(el, tag, role, root) {
    const lb = el.getAttribute('aria-labelledby');
    if (lb) { const s = clean(byIds(root, lb)); if (s) return s; }
    const al = el.getAttribute('aria-label');
    if (al && al.trim()) return clean(al);
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (tag === 'INPUT' && (t === 'button' || t === 'submit' || t === 'reset') && el.value) return clean(el.value);
      if (tag === 'INPUT' && t === 'image' && el.alt) return clean(el.alt);
      if (el.labels && el.labels.length) {
        const s = clean(Array.from(el.labels).map(l => l.innerText).join(' '));
        if (s) return s;
      }
      if (el.placeholder) return clean(el.placeholder);
      if (el.title) return clean(el.title);
      if (tag === 'INPUT' && t === 'submit') return 'Submit';
      return '';
    }
    if (tag === 'IMG') return clean(el.alt || el.title);
    const txt = clean(el.innerText);
    if (txt) return txt;
    if (el.title) return clean(el.title);
    const img = el.querySelector && el.querySelector('img[alt]');
    return img ? clean(img.alt) : '';
  }

  function statesOf(el, tag, role, root) {
    const s = [];
    const active = root.activeElement;
    if (active === el) s.push('focused');
    const ac = el.getAttribute('aria-checked');
    if (el.checked === true || ac === 'true') s.push('checked');
    if (ac === 'mixed' || el.indeterminate) s.push('indeterminate');
    if ((tag === 'OPTION' && el.selected) || el.getAttribute('aria-selected') === 'true') s.push('selected');
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true' || (tag === 'SUMMARY' && el.parentElement && el.parentElement.open)) s.push('expanded');
    else if (ex === 'false' || tag === 'SUMMARY') s.push('collapsed');
    const disabled = el.disabled === true || el.getAttribute('aria-disabled') === 'true' ||
      (el.closest && el.closest('fieldset[disabled]') && tag !== 'LEGEND');
    s.push(disabled ? 'disabled' : 'enabled');
    const editable = (tag === 'TEXTAREA' || (tag === 'INPUT' && (role === 'entry' || role === 'password text'))
      || el.isContentEditable) && !el.readOnly && !disabled;
    if (editable) s.push('editable');
    if (tag === 'TEXTAREA' || (el.isContentEditable && tag !== 'INPUT')) s.push('multi-line');
    if (el.tabIndex >= 0 || editable) s.push('focusable');
    if (el.getAttribute('aria-pressed') === 'true') s.push('pressed');
    if (el.required) s.push('required');
    return s;
  }

  function valueOf(el, tag, role) {
    if (tag === 'SELECT') { const o = el.options[el.selectedIndex]; return o ? clean(o.text) : ''; }
    if (tag === 'TEXTAREA') return el.value.slice(0, 2000);
    if (tag === 'INPUT') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (t === 'password') return el.value ? '*'.repeat(el.value.length) : '';
      if (TEXT_INPUTS.has(t) || t === 'range' || t === 'color') return el.value.slice(0, 2000);
      return null;
    }
    if (el.isContentEditable) return clean(el.innerText, 2000);
    return null;
  }

  function selectorOf(el) {
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1 && parts.length < 12) {
      if (n.id && /^[A-Za-z][\w-]*$/.test(n.id)) { parts.unshift('#' + n.id); break; }
      let i = 1, sib = n;
      while ((sib = sib.previousElementSibling)) if (sib.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
      n = n.parentElement;
    }
    return parts.join(' > ');
  }

  function related(a, b) { // a is b, or one contains the other across shadow boundaries
    for (let n = b; n; n = n.parentNode || n.host) if (n === a) return true;
    for (let n = a; n; n = n.parentNode || n.host) if (n === b) return true;
    return false;
  }

  function covered(el, root, x, y) {
    if (hitTests >= hitTestMax || !root.elementFromPoint) return false;
    hitTests++;
    const hit = root.elementFromPoint(x, y);
    if (!hit) return false;
    if (related(hit, el)) return false;
    if (hit.tagName === 'LABEL' && hit.control === el) return false;
    return true;
  }

  function textBox(el) { // box and text of the element's own text (all of it when its children are inline)
    let l = Infinity, t = Infinity, r = -Infinity, b = -Infinity, text = '';
    const own = Array.from(el.childNodes).filter(c => c.nodeType === 3 && c.nodeValue.trim());
    if (!own.length) return null;
    // Whole sentence when the children are plain inline formatting; a child with an id or a role is
    // addressed on its own (a clock, a counter) and would make the parent's text volatile.
    const inline = Array.from(el.children).every(c => INLINE.has(c.tagName) && !c.id && !c.hasAttribute('role'));
    for (const c of inline && el.children.length ? [el] : own) {
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(c);
      for (const q of range.getClientRects()) {
        if (q.width <= 0 || q.height <= 0) continue;
        l = Math.min(l, q.left); t = Math.min(t, q.top); r = Math.max(r, q.right); b = Math.max(b, q.bottom);
      }
      text += ' ' + (c === el ? el.innerText : c.nodeValue);
    }
    return r > l ? {rect: {left: l, top: t, right: r, bottom: b}, text: clean(text)} : null;
  }

  function emit(el, tag, role, name, rect, ctx, extra, passive) {
    const left = Math.max(rect.left, ctx.clip.left), top = Math.max(rect.top, ctx.clip.top);
    const right = Math.min(rect.right, ctx.clip.right), bottom = Math.min(rect.bottom, ctx.clip.bottom);
    if (right - left < 1 || bottom - top < 1) return;
    if (covered(el, ctx.root, (left + right) / 2, (top + bottom) / 2)) return;
    const x = left + ctx.ox, y = top + ctx.oy, w = right - left, h = bottom - top;
    if (x + w <= 0 || y + h <= 0 || x >= vw || y >= vh) return;
    const attrs = {tag: tag.toLowerCase(), selector: selectorOf(el)};
    if (ctx.frame) attrs.frame = ctx.frame;
    if (ctx.shadow) attrs.shadow = true;
    if (tag === 'A' && el.href) attrs.href = String(el.href).slice(0, 300);
    if (tag === 'INPUT') attrs.type = (el.getAttribute('type') || 'text').toLowerCase();
    if (el.id) attrs.dom_id = el.id;
    if (tag === 'SELECT') attrs.options = Array.from(el.options).slice(0, 50).map(o => clean(o.text, 80));
    Object.assign(attrs, extra || {});
    out.push({role, name, bbox: [Math.round(x), Math.round(y), Math.max(1, Math.round(w)), Math.max(1, Math.round(h))],
      states: passive ? [] : statesOf(el, tag, role, ctx.root),
      value: passive ? (LIVE.has(role) ? clean(el.innerText, 500) : null) : valueOf(el, tag, role),
      path: ctx.path.slice(-6), attrs});
  }

  function pathEntry(el, tag) {
    if (el.id) return tag.toLowerCase() + ':#' + el.id;
    const aria = el.getAttribute('role');
    const sem = aria && ARIA[aria] ? ARIA[aria] : SEMANTIC[tag];
    if (!sem) return null;
    const lab = el.getAttribute('aria-label') || (tag === 'FIELDSET' && el.querySelector('legend')
      ? el.querySelector('legend').textContent : '');
    return sem + ':' + clean(lab, 60);
  }

  // Walk with an explicit stack: [node, ctx, insideInteractive].
  const topClip = base.clip || {left: 0, top: 0, right: vw, bottom: vh};
  const stack = [[document.documentElement, {root: document, ox: base.ox || 0, oy: base.oy || 0, clip: topClip,
    path: base.path || [], frame: base.frame || null, shadow: false}, false]];
  while (stack.length) {
    if ((++visited & 127) === 0 && performance.now() - t0 > maxMs) { partial = true; reason = 'time'; break; }
    if (visited > maxNodes) { partial = true; reason = 'nodes'; break; }
    if (out.length >= maxEls) { partial = true; reason = 'elements'; break; }
    const [el, ctx, inside] = stack.pop();
    if (!el || el.nodeType !== 1) continue;
    const tag = el.tagName;
    if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'NOSCRIPT' || tag === 'TEMPLATE' || tag === 'HEAD') continue;
    const rect = el.getBoundingClientRect();
    const off = rect.right <= ctx.clip.left || rect.left >= ctx.clip.right || rect.bottom <= ctx.clip.top ||
      rect.top >= ctx.clip.bottom;
    if (off && !el.firstElementChild && !el.shadowRoot) continue; // an off-screen leaf: nothing to see
    if (!off && el.checkVisibility && !el.checkVisibility({opacityProperty: true}) &&
        getComputedStyle(el).display !== 'contents') continue; // hidden with its whole subtree
    const style = off ? null : getComputedStyle(el);
    const shown = !off && style.visibility !== 'hidden' && style.visibility !== 'collapse' &&
      rect.width > 0 && rect.height > 0;
    let role = roleOf(el, tag);
    let clickable = false;
    if (!role && !inside && shown && (hasListener(el) || (el.hasAttribute('tabindex') && el.tabIndex >= 0) ||
        (style.cursor === 'pointer' && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer')))) {
      role = 'push button'; clickable = true;
    }
    const interactive = !!role && !clickable && !PASSIVE.has(role);
    if (shown && role) {
      const name = CONTAINERS.has(role) ? clean(el.getAttribute('aria-label') || el.title) : nameOf(el, tag, role, ctx.root);
      emit(el, tag, role, name, rect, ctx, clickable ? {clickable: true} : null, !interactive && !clickable);
    } else if (shown && !inside) {
      const tb = textBox(el);
      if (tb && tb.text) emit(el, tag, 'text', tb.text, tb.rect, ctx, null, true);
    }
    const entry = pathEntry(el, tag);
    const childCtx = entry ? Object.assign({}, ctx, {path: ctx.path.concat([entry])}) : ctx;
    const childInside = inside || (interactive && !CONTAINERS.has(role));
    if (tag === 'IFRAME' || tag === 'FRAME') {
      let doc = null;
      try { doc = el.contentDocument; } catch (e) { doc = null; }
      if (shown) {
        const cs = getComputedStyle(el);
        const ox = ctx.ox + rect.left + el.clientLeft + parseFloat(cs.paddingLeft || 0);
        const oy = ctx.oy + rect.top + el.clientTop + parseFloat(cs.paddingTop || 0);
        const dx = ox - ctx.ox, dy = oy - ctx.oy;
        const clip = {left: Math.max(0, ctx.clip.left - dx), top: Math.max(0, ctx.clip.top - dy),
          right: Math.min(el.clientWidth, ctx.clip.right - dx), bottom: Math.min(el.clientHeight, ctx.clip.bottom - dy)};
        const fname = 'frame:' + clean(el.getAttribute('name') || el.getAttribute('title') || el.id || el.getAttribute('src') || '', 60);
        const fctx = {ox, oy, clip, path: childCtx.path.concat([fname]), frame: (ctx.frame ? ctx.frame + '>' : '') + selectorOf(el)};
        if (doc && doc.documentElement) stack.push([doc.documentElement, Object.assign({root: doc, shadow: false}, fctx), false]);
        else if (!doc && clip.right > clip.left && clip.bottom > clip.top) // cross-origin: cua.perception.dom walks it
          remote.push(Object.assign({x: ctx.ox + rect.left, y: ctx.oy + rect.top, src: el.src || ''}, fctx));
      }
      continue;
    }
    const kids = el.children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], childCtx, childInside]);
    if (el.shadowRoot) {
      const sctx = Object.assign({}, childCtx, {root: el.shadowRoot, shadow: true});
      const sk = el.shadowRoot.children;
      for (let i = sk.length - 1; i >= 0; i--) stack.push([sk[i], sctx, childInside]);
    }
  }
  return {elements: out, frames: remote, partial, reason, visited, ms: performance.now() - t0, viewport: [vw, vh]};
}
