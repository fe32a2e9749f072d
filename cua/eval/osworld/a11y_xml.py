"""The accessibility tree as OSWorld's server serialises it: XML, a tag per role, namespaced states.

OSWorld's metric `check_accessibility_tree` selects nodes by role tag and `name` attribute and reads
their text and `st:` state attributes. cua's AT-SPI walk gives visible elements (not the full
hierarchy), so each element is a child of its application's node.
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
