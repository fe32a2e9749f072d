"""The accessibility tree as OSWorld's server serialises it: XML, a tag per role, namespaced states.

OSWorld's metric `check_accessibility_tree` selects nodes with CSS selectors or XPath over the whole
hierarchy (`tool-bar[attr|id=MsgHeadersToolbar] label[name=To] ~ ...`), by role tag, `name`, `st:` states,
`attr:` object attributes and text. `osworld_xml` builds that document from the AT-SPI helper's full walk
(`A11yReader.tree`), node for node as the VM server does: a tag per role (spaces as dashes), every state,
every object attribute, screen position and size of showing nodes, text, value, actions, and only the
showing cells of a Calc sheet. `tree_xml` is the fallback for envs without a local AT-SPI bus (a remote
guest): the visible elements of one observation, each a child of its application's node.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

NS = {"st": "https://accessibility.ubuntu.example.org/ns/state",
      "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
      "cp": "https://accessibility.ubuntu.example.org/ns/component",
      "doc": "https://accessibility.ubuntu.example.org/ns/document",
      "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
      "txt": "https://accessibility.ubuntu.example.org/ns/text",
      "val": "https://accessibility.ubuntu.example.org/ns/value",
      "act": "https://accessibility.ubuntu.example.org/ns/action"}


_XML_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]*$")
_XML_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _XML_BAD_CHARS.sub("", text)


def _node(parent: ET.Element | None, n: dict) -> ET.Element:
    attrs = {"name": _clean(n.get("name", ""))}
    for st in n.get("states", []):
        attrs[f"{{{NS['st']}}}{st}"] = "true"
    for k, v in (n.get("attributes") or {}).items():
        if _XML_NAME.match(k):  # an attribute name XML cannot carry is left out rather than failing the tree
            attrs[f"{{{NS['attr']}}}{k}"] = _clean(v)
    if n.get("bbox"):
        x, y, w, h = n["bbox"]
        attrs[f"{{{NS['cp']}}}screencoord"] = f"({x}, {y})"
        attrs[f"{{{NS['cp']}}}size"] = f"({w}, {h})"
    if n.get("image"):
        attrs["image"] = "true"
    if n.get("selection"):
        attrs["selection"] = "true"
    for k, v in (n.get("value") or {}).items():
        attrs[f"{{{NS['val']}}}{k}"] = v
    for name, desc, kb in n.get("actions") or []:
        name = name.replace(" ", "-")
        if _XML_NAME.match(name):
            attrs[f"{{{NS['act']}}}{name}_desc"] = _clean(desc)
            attrs[f"{{{NS['act']}}}{name}_kb"] = _clean(kb)
    tag = n.get("role", "").replace(" ", "-") or "unknown"
    if not _XML_NAME.match(tag):
        tag = _tag(tag)
    el = ET.Element(tag, attrs) if parent is None else ET.SubElement(parent, tag, attrs)
    if n.get("text"):
        el.text = _clean(n["text"])
    for c in n.get("children", []):
        _node(el, c)
    return el


def osworld_xml(reply: dict) -> str:
    """OSWorld's accessibility-tree XML from `A11yReader.tree()`'s reply: a `desktop-frame` of applications."""
    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    root = ET.Element("desktop-frame")
    for app in reply.get("tree", []):
        _node(root, app)
    return ET.tostring(root, encoding="unicode")


def _tag(role: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", role.strip().lower().replace(" ", "-")) or "unknown"


def tree_xml(obs) -> str:
    for prefix, uri in NS.items():
        ET.register_namespace(prefix, uri)
    root = ET.Element("desktop-frame", {"name": "main"})
    app = ET.SubElement(root, "application", {"name": obs.app or ""})
    for e in obs.elements:
        if e.source != "a11y":
            continue
        attrs = {"name": e.name or ""}
        for s in e.states:
            attrs[f"{{{NS['st']}}}{s}"] = "true"
        x, y, w, h = e.bbox
        attrs[f"{{{NS['cp']}}}screencoord"] = f"({int(x)}, {int(y)})"
        attrs[f"{{{NS['cp']}}}size"] = f"({int(w)}, {int(h)})"
        node = ET.SubElement(app, _tag(e.role), attrs)
        node.text = e.value or e.name or ""
    return ET.tostring(root, encoding="unicode")
