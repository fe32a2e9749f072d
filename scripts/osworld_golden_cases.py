"""Golden cases for OSWorld's metrics: per metric at least a pass, a fail and an edge case.

Imported by scripts/osworld_golden.py in the golden venv (it has openpyxl, python-docx, python-pptx,
Pillow...). A case: id, metric, args (positional: result, expected), options, build(dir) that writes
the input files that args name as "@/<file>". Builders are deterministic (no clocks, seeded data).
"""

from __future__ import annotations

import json
from pathlib import Path

CASES: list[dict] = []


def case(metric: str, name: str, *args, build=None, **options) -> None:
    CASES.append({"id": f"{metric}--{name}", "metric": metric, "args": list(args), "options": options,
                  "build": build})


def text(**files):
    """A builder that writes text (str) or bytes files."""
    def build(d: Path) -> None:
        for name, content in files.items():
            name = name.replace("__", ".")
            (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return build


def reference_function(ref, name: str):
    return getattr(ref, name)


def all_cases() -> list[dict]:
    import osworld_golden_docs  # noqa: F401
    import osworld_golden_media  # noqa: F401
    import osworld_golden_apps  # noqa: F401
    import osworld_golden_table  # noqa: F401
    import osworld_golden_slides  # noqa: F401
    seen = set()
    for c in CASES:
        assert c["id"] not in seen, c["id"]
        seen.add(c["id"])
    return CASES


# ---- general: rules on values -------------------------------------------------------------------
case("check_include_exclude", "pass", "the Sidebar is on", {"include": ["Sidebar"], "exclude": ["off"]})
case("check_include_exclude", "fail-excluded", "Sidebar off", {"include": ["Sidebar"], "exclude": ["off"]})
case("check_include_exclude", "none", None, {"include": ["x"]})
case("check_include_exclude", "empty-rules", "", {})
case("exact_match", "pass", "true", {"expected": "true"})
case("exact_match", "fail", "True", {"expected": "true"})
case("exact_match", "none", None, {"expected": None})
case("exact_match", "list", [1, 2], {"expected": [1, 2]})
case("match_in_list", "pass", "b", {"expected": ["a", "b"]})
case("match_in_list", "fail", "c", {"expected": ["a", "b"]})
case("match_in_list", "substring", "a", {"expected": "cat"})
case("is_in_list", "pass", ["a", "b"], {"expected": "b"})
case("is_in_list", "fail", ["a", "b"], {"expected": "c"})
case("is_in_list", "string", "abc", {"expected": "bc"})
case("literal_match", "pass", "Hello", "Hello")
case("literal_match", "case", "Hello", "hello", ignore_case=True)
case("literal_match", "case-strict", "Hello", "hello")
case("literal_match", "list", ["A", 1], ["a", "1"], type="list", ignore_case=True)
case("literal_match", "list-len", ["A"], ["a", "1"], type="list")
case("literal_match", "list-not-list", "A", ["A"], type="list")
case("literal_match", "number", 1, "1")
case("fuzzy_match", "close", "kitten", {"expected": "sitting"})
case("fuzzy_match", "same", "abc", {"expected": "abc"})
case("fuzzy_match", "empty", "", {"expected": ""})
case("check_direct_json_object", "pass", {"a": 1, "b": "x"}, {"expected": {"a": 1}})
case("check_direct_json_object", "fail", {"a": 2}, {"expected": {"a": 1}})
case("check_direct_json_object", "string", "{'a': 'x', 'b': 2}", {"expected": {"a": "x", "b": 2}})
case("check_direct_json_object", "bad-json", "not json", {"expected": {"a": 1}})
case("check_direct_json_object", "none", None, {"expected": {"a": 1}})
case("check_direct_json_object", "failed-marker", {"a": 1}, {"expected": {"a": "__EVALUATION_FAILED__"}})
case("check_direct_json_object", "in-result-list", {"a": ["x", "y"], "b": "hello world"},
     {"expect_in_result": True, "expected": {"a": ["y", "z"], "b": "world"}})
case("check_direct_json_object", "in-result-miss", {"a": ["x"], "b": "hello"},
     {"expect_in_result": True, "expected": {"a": ["z"], "b": "hello"}})
case("check_direct_json_object", "in-result-number", {"a": 1}, {"expect_in_result": True, "expected": {"a": 1}})
case("check_direct_json_object", "missing-key", {"b": 1}, {"expected": {"a": None}})
case("check_direct_json_object", "in-result-none", {"b": 1}, {"expect_in_result": True, "expected": {"a": "x"}})
case("check_accessibility_tree", "pass",
     '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state">'
     '<push-button name="OK" st:enabled="true">OK</push-button></desktop-frame>',
     [{"selectors": ["push-button[name=\"OK\"]"], "text": "OK", "exact": True}])
case("check_accessibility_tree", "fuzzy",
     "<desktop-frame><label name='x'>Helo world</label></desktop-frame>",
     [{"xpath": "//label", "text": "Hello world", "exact": False}])
case("check_accessibility_tree", "no-element", "<desktop-frame/>", [{"selectors": ["push-button"]}])
case("check_accessibility_tree", "no-text-rule", "<a><b/></a>", [{"xpath": "//b"}])

# ---- general: files -----------------------------------------------------------------------------
case("check_csv", "pass", "@/r.csv", {"expect": [{"name": "a", "n": "1"}], "unexpect": [{"name": "z"}]},
     build=text(r__csv="name,n\na,1\nb,2\n"))
case("check_csv", "fail-unexpect", "@/r.csv", {"expect": [{"name": "a"}], "unexpect": [{"name": "b"}]},
     build=text(r__csv="name,n\na,1\nb,2\n"))
case("check_csv", "none", None, {"expect": []})
case("check_csv", "missing-expect", "@/r.csv", {"expect": [{"name": "c"}]}, build=text(r__csv="name\na\n"))
case("check_list", "pass", "@/l.txt", {"expect": ["^a.c$", "x"], "unexpect": ["zz"]}, build=text(l__txt="abc\nxy\n"))
case("check_list", "fail", "@/l.txt", {"expect": ["q"]}, build=text(l__txt="abc\n"))
case("check_list", "unexpect", "@/l.txt", {"expect": [], "unexpect": ["b"]}, build=text(l__txt="abc\n"))
case("check_list", "none", None, {"expect": []})
case("check_json", "pass", "@/s.json", {"expect": [{"key": ["a", "b"], "method": "eq", "ref": 3}]},
     build=text(s__json='{"a": {"b": 3}}'))
case("check_json", "fail", "@/s.json", {"expect": [{"key": ["a", "b"], "method": "eq", "ref": 4}]},
     build=text(s__json='{"a": {"b": 3}}'))
case("check_json", "missing-key", "@/s.json", {"expect": [{"key": ["q"], "method": "eq", "ref": 4}]},
     build=text(s__json='{"a": 1}'))
case("check_json", "unexpect", "@/s.json", {"unexpect": [{"key": ["q"], "method": "eq", "ref": None}]},
     build=text(s__json='{"a": 1}'))
case("check_json", "yaml", "@/s.yaml", {"expect": [{"key": ["x"], "method": "re", "ref": "^ab"}]},
     is_yaml=True, build=text(s__yaml="x: abc\n"))
case("check_json", "yaml-empty", "@/s.yaml", {"expect": []}, is_yaml=True, build=text(s__yaml=""))
case("check_json", "bad-json", "@/s.json", {"expect": []}, build=text(s__json="{"))
case("check_json", "missing-file", "@/nope.json", {"expect": []})
case("check_json", "approx", "@/s.json", {"expect": [{"key": ["v"], "method": "approx:0.1", "ref": 1.0}]},
     build=text(s__json='{"v": "1.05"}'))
case("check_json", "str-set", "@/s.json", {"expect": [{"key": ["v"], "method": "str_set_eq", "ref": ["b", "a"]}]},
     build=text(s__json='{"v": "a,b"}'))
case("check_json", "range", "@/s.json", {"expect": [{"key": ["v"], "method": "range.te", "ref": [0, 2]}]},
     build=text(s__json='{"v": 2}'))
case("run_sqlite3", "count", "@/d.sqlite", {"sql": "select count(*) from t where x > 1"},
     build=lambda d: _sqlite(d / "d.sqlite", [(1,), (2,), (3,)]))
case("run_sqlite3", "zero", "@/d.sqlite", {"sql": "select count(*) from t where x > 9"},
     build=lambda d: _sqlite(d / "d.sqlite", [(1,)]))
case("run_sqlite3", "null", "@/d.sqlite", {"sql": "select max(x) from t"},
     build=lambda d: _sqlite(d / "d.sqlite", []))
case("diff_text_file", "same", "@/a.txt", "@/b.txt", build=text(a__txt="x\ny\n", b__txt="x\ny\n"))
case("diff_text_file", "half", "@/a.txt", "@/b.txt", build=text(a__txt="x\ny\n", b__txt="x\nz\n"))
case("diff_text_file", "none", None, "@/b.txt", build=text(b__txt="x"))
case("diff_text_file", "empty", "@/a.txt", "@/b.txt", build=text(a__txt="", b__txt=""))
case("file_contains", "pass", "@/f.txt", {"expected": ["ab", "cd"]}, build=text(f__txt="abcd"))
case("file_contains", "fail", "@/f.txt", {"expected": ["ab", "x"]}, build=text(f__txt="abcd"))
case("file_contains", "missing", "@/nope.txt", {"expected": ["ab"]})
case("file_contains", "none", None, {"expected": ["ab"]})
case("check_line_number", "pass", "@/t.txt", {"expected": "2"}, build=text(t__txt="12:00:01 a\nno\n23:59:60 b\n"))
case("check_line_number", "fail", "@/t.txt", {"expected": 1}, build=text(t__txt="12:00:01 a\n24:00:00\n01:02:03"))
case("check_line_number", "missing", "@/nope.txt", {"expected": 0})
case("compare_terminal_and_txt", "pass", "@/t.txt", "hi\n", build=text(t__txt="hi\n"))
case("compare_terminal_and_txt", "fail", "@/t.txt", "hi", build=text(t__txt="hi\n"))
case("compare_terminal_and_txt", "empty", "@/t.txt", "", build=text(t__txt=""))
case("compare_python_pure_text", "pass", "@/a.txt", "@/b.txt",
     build=text(a__txt="#!/usr/bin/env python\nx = 1\n\n\tif x:\n", b__txt="x = 1\n    if x:   \n"))
case("compare_python_pure_text", "fail", "@/a.txt", "@/b.txt", build=text(a__txt="x = 1\n", b__txt="x = 2\n"))
case("compare_python_pure_text", "missing", "@/a.txt", "@/nope.txt", build=text(a__txt="x"))
case("compare_python_pure_text", "markdown", "@/a.txt", "@/b.txt", build=text(a__txt="```python\nx=1\n```", b__txt="x=1"))
case("is_included_all_json_objects", "pass", "@/g.json", "@/r.json",
     build=text(g__json='{"a": 1}', r__json='{"a": 1, "b": 2}'))
case("is_included_all_json_objects", "fail", "@/g.json", "@/r.json",
     build=text(g__json='{"a": 1}', r__json='{"a": 2}'))
case("is_included_all_json_objects", "none", None, "@/r.json", build=text(r__json="{}"))
case("compare_time_in_speedtest_results", "none", None, "5")
case("compare_time_in_speedtest_results", "bad-file", "@/s.csv", "5", build=text(s__csv="only one line\n"))
case("compare_time_in_speedtest_results", "missing", "@/nope.csv", "5")


def _sqlite(path: Path, rows) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("create table t (x integer)")
    con.executemany("insert into t values (?)", rows)
    con.commit()
    con.close()


def dump(obj) -> str:
    return json.dumps(obj)
