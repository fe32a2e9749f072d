"""OSWorld's own task files run on cua environments: loader, set-up steps, getters, evaluator, assets.

OSWorld (github.com/xlang-ai/OSWorld, Apache-2.0) describes a task as JSON: `config` set-up steps,
an `evaluator` with getters (`result`, `expected`) and metric functions (`func`, `conj`, `options`).
This package reads that JSON as it is and runs it on a sandbox desktop; docs/osworld.md has the mappings.
"""
