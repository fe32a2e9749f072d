"""Write tests/osworld/golden_used_metrics.json: the metric functions OSWorld's Linux tasks use.

usage: python scripts/osworld_used_metrics.py OSWORLD/evaluation_examples
Reads test_all.json and each task's evaluator `func` (a name or a list); counts tasks per metric and
notes which tasks need Google Drive (a `googledrive`/`login` config step or getter).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "osworld" / "golden_used_metrics.json"


def used_metrics(examples: Path) -> dict:
    index = json.loads((examples / "test_all.json").read_text())
    tasks: Counter = Counter()
    google: Counter = Counter()
    for domain, ids in index.items():
        for task_id in ids:
            task = json.loads((examples / "examples" / domain / f"{task_id}.json").read_text())
            func = task["evaluator"]["func"]
            names = set(func if isinstance(func, list) else [func])
            blob = json.dumps(task)
            needs_google = '"googledrive"' in blob or '"login"' in blob or "googledrive" in blob
            for n in names:
                tasks[n] += 1
                if needs_google:
                    google[n] += 1
    return {
        "source": "OSWorld evaluation_examples/test_all.json",
        "tasks": sum(len(v) for v in index.values()),
        "metrics": dict(sorted(tasks.items())),
        "google_tasks": dict(sorted(google.items())),
        "agent_verdict": ["infeasible"],
    }


if __name__ == "__main__":
    data = used_metrics(Path(sys.argv[1]))
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['metrics'])} metrics over {data['tasks']} tasks -> {OUT}")
