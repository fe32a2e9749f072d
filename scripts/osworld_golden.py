"""Write tests/osworld/golden.jsonl: OSWorld's reference metrics (desktop-env) run on generated inputs.

`--verify` re-runs the reference on the stored inputs and reports verdicts that differ (used to check
that the golden verdicts do not depend on library versions). Run by `make osworld-golden` inside a throwaway venv that has `desktop-env --no-deps` and the libraries
its metric modules import; never imported by cua. Each case's input files are built (deterministically)
under tests/osworld/golden_inputs/<case id>/; arguments name them as "@/<file>". Modules the reference
imports at load time but no called metric needs (OCR, audio fingerprinting) are stubbed and listed in
the output's header line.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import importlib.machinery
import json
import logging
import math
import shutil
import sys
import types
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "osworld" / "golden.jsonl"
INPUTS = ROOT / "tests" / "osworld" / "golden_inputs"
STUBBED: list[str] = []
STUB_ROOTS = ("easyocr", "librosa", "acoustid", "borb")


def _stub_attribute(attr: str):
    if attr.startswith("__"):
        raise AttributeError(attr)  # inspect (numba, via librosa) probes __file__ of every module
    return type(attr, (), {})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stand-ins for heavy modules the reference imports at module level and our cases never call."""

    decided: dict[str, bool] = {}

    def find_spec(self, name, path=None, target=None):
        root = name.split(".")[0]
        if root not in STUB_ROOTS:
            return None
        if root not in self.decided:
            sys.meta_path.remove(self)
            try:
                self.decided[root] = importlib.util.find_spec(root) is None
            finally:
                sys.meta_path.insert(0, self)
        if self.decided[root]:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__getattr__ = _stub_attribute
        STUBBED.append(spec.name)
        return mod

    def exec_module(self, module):
        pass


def _resolve(value, base: Path):
    if isinstance(value, str) and value.startswith("@/"):
        return str(base / value[2:])
    if isinstance(value, list):
        return [_resolve(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, base) for k, v in value.items()}
    return value


def _verdict(fn, args, options):
    try:
        out = fn(*args, **options)
    except Exception as e:  # the reference raising is a verdict too: ours must raise as well
        return {"raises": type(e).__name__}
    if out is None:
        return None
    out = float(out)
    return {"nan": True} if math.isnan(out) else out


def verify(ref) -> int:
    """Re-run the reference on the stored inputs (e.g. under other library versions); print disagreements."""
    lines = OUT.read_text().splitlines()
    records = [json.loads(line) for line in lines[1:]]
    import osworld_golden_cases as cases_mod

    differ = 0
    for rec in records:
        base = INPUTS / rec["id"]
        fn = cases_mod.reference_function(ref, rec["metric"])
        got = _verdict(fn, _resolve(rec["args"], base), _resolve(rec["options"], base))
        same = got == rec["verdict"] or (isinstance(got, float) and isinstance(rec["verdict"], float)
                                         and math.isclose(got, rec["verdict"], rel_tol=1e-6, abs_tol=1e-6))
        if not same:
            differ += 1
            print(f"DIFFERS {rec['id']}: stored {rec['verdict']!r}, now {got!r}")
    print(f"{len(records) - differ}/{len(records)} verdicts reproduced")
    return 1 if differ else 0


def main() -> None:
    sys.meta_path.insert(0, _StubFinder())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import osworld_golden_cases as cases_mod
    from desktop_env.evaluators import metrics as ref

    logging.disable(logging.CRITICAL)  # the reference logs every comparison at DEBUG
    if sys.argv[1:] == ["--verify"]:
        sys.exit(verify(ref))

    only = set(sys.argv[1:])
    cases = cases_mod.all_cases()
    if not only:
        shutil.rmtree(INPUTS, ignore_errors=True)
    INPUTS.mkdir(parents=True, exist_ok=True)
    old = {}
    if only and OUT.exists():
        for line in OUT.read_text().splitlines()[1:]:
            rec = json.loads(line)
            old[rec["id"]] = rec
    header = {"reference": f"desktop-env {version('desktop-env')}", "stubbed": sorted(set(STUBBED))}
    records = dict(old)
    for case in cases:
        if only and case["metric"] not in only:
            continue
        base = INPUTS / case["id"]
        shutil.rmtree(base, ignore_errors=True)
        if case.get("build"):
            base.mkdir(parents=True)
            case["build"](base)
        fn = cases_mod.reference_function(ref, case["metric"])
        args = _resolve(case["args"], base)
        options = _resolve(case.get("options", {}), base)
        rec = {k: case[k] for k in ("id", "metric", "args") if k in case}
        rec["options"] = case.get("options", {})
        rec["verdict"] = _verdict(fn, args, options)
        records[case["id"]] = rec
        print(f"{case['id']:60s} {rec['verdict']}")
    header["stubbed"] = sorted(set(STUBBED))
    with OUT.open("w") as f:
        f.write(json.dumps(header) + "\n")
        for rec in sorted(records.values(), key=lambda r: r["id"]):
            f.write(json.dumps(rec, sort_keys=True) + "\n")
    print(f"{len(records)} cases -> {OUT.relative_to(ROOT)} ({header['reference']}; stubbed: {header['stubbed']})")


if __name__ == "__main__":
    main()
