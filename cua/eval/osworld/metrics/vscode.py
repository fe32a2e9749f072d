"""OSWorld's VS Code metrics: settings/keybindings JSON, text and archive comparison, task test suites."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from difflib import SequenceMatcher
from pathlib import Path


def _json_list(path):
    """keybindings.json as a list: parsed whole, or after its first (comment) line; None if neither."""
    for skip_first in (False, True):
        try:
            with open(path) as f:
                if skip_first:
                    f.readline()
                data = json.load(f)
        except Exception:
            data = None
        if data is not None and type(data) is list:
            return data
    return None


def check_json_keybindings(actual: str, expected, **options) -> float:
    data = _json_list(actual)
    if data is None:
        return 0.0
    return 1.0 if expected["expected"] in data else 0.0


def check_json_settings(actual: str, expected, **options) -> float:
    if not actual:
        return 0.0
    try:
        with open(actual) as f:
            data = json.load(f)
    except Exception:
        return 0.0
    return 0.0 if any(k not in data or data[k] != v for k, v in expected["expected"].items()) else 1.0


def _blank_fold(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", text).strip())


def compare_text_file(actual: str, expected: str, **options) -> float:
    if not actual:
        return 0.0
    with open(actual) as f:
        a = f.read()
    with open(expected) as f:
        b = f.read()
    if options.get("ignore_blanks", False):
        a, b = _blank_fold(a), _blank_fold(b)
    if options.get("ignore_case", False):
        a, b = a.lower(), b.lower()
    return 1.0 if a == b else 0.0


def _pdf_bytes_text(content: bytes) -> str:
    import io

    from pypdf import PdfReader

    return "".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def compare_zip_files(actual: str, expected: str, **options) -> float:
    """Same member names; members byte-equal, PDFs by text similarity >= 0.95."""
    if not actual:
        return 0.0
    with zipfile.ZipFile(actual) as z1, zipfile.ZipFile(expected) as z2:
        names = set(z1.namelist())
        if names != set(z2.namelist()):
            return 0.0
        for name in names:
            c1, c2 = z1.read(name), z2.read(name)
            if name.lower().endswith(".pdf"):
                if SequenceMatcher(None, _pdf_bytes_text(c1), _pdf_bytes_text(c2)).ratio() < 0.95:
                    return 0.0
            elif c1 != c2:
                return 0.0
    return 1.0


def compare_config(actual: str, rules: dict, **options) -> float:
    if not actual:
        return 0.0
    with open(actual) as f:
        return 1.0 if f.read() == rules["expected"] else 0.0


def compare_answer(actual: str, rules: dict, **options) -> float:
    if not actual:
        return 0.0
    return 1.0 if actual == rules["expected"] else 0.0


def is_extension_installed(actual: str, rules: dict, **options):
    if rules["type"] == "contain":
        return 1.0 if rules["expected"] in actual else 0.0
    if rules["type"] == "not_contain":
        return 1.0 if rules["expected"] not in actual else 0.0
    raise NotImplementedError(rules["type"])


_RUNNER = """
import importlib.util, json, os, sys
path, name = sys.argv[1], sys.argv[2]
os.chdir(os.path.dirname(path)); sys.path.insert(0, os.path.dirname(path))
spec = importlib.util.spec_from_file_location("task_test_suite", path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
fn = getattr(mod, name, None)
if not callable(fn):
    print(json.dumps(None)); sys.exit(0)
r = fn()
if isinstance(r, bool): out = 1.0 if r else 0.0
elif isinstance(r, (int, float)): out = max(0.0, min(1.0, float(r)))
else: out = 1.0 if bool(r) else 0.0
print(json.dumps(out))
"""


def check_python_file_by_test_suite(actual_files, test_file, **options) -> float:
    """Run the task's own test file (a task asset, never model output) and score what its test function
    returns (bools as 1/0, numbers clamped to [0, 1]); any failure scores 0. It runs in a child Python
    (OSWorld imports it into the evaluator), with a 10-minute limit."""
    name = options.get("test_function_name", "test")
    if not test_file:
        return 0.0
    path = Path(test_file).resolve()
    if not path.is_file():
        return 0.0
    try:
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(path), name], capture_output=True, text=True,
                              timeout=600, cwd=path.parent)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            return 0.0
        out = json.loads(lines[-1])
    except Exception:
        return 0.0
    return 0.0 if out is None else float(out)


def check_html_background_image(src_path: str, rule: dict | None = None) -> float:
    if not src_path:
        return 0.0
    from bs4 import BeautifulSoup

    with open(src_path) as f:
        soup = BeautifulSoup(f.read(), "html.parser")
    want = f"background-image: url('{rule['value']}')"
    return 1.0 if any(want in s.text for s in soup.find_all("style")) else 0.0


def compare_result_files(src_path, tgt_path):
    """Stripped contents equal; if the target is a number, it appears in the source or equals it
    within 1e-4."""
    if not src_path or not tgt_path:
        return 0.0
    with open(src_path) as f:
        src = f.read().strip()
    with open(tgt_path) as f:
        tgt = f.read().strip()
    try:
        tgt_num = float(tgt)
        if tgt in src:
            return 1.0
        return 1.0 if abs(float(src) - tgt_num) < 1e-4 else 0.0
    except Exception:
        if src == tgt:
            return 1.0
    return 0.0
