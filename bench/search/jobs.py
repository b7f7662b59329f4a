"""The bench's training jobs as Ray Tune and Optuna run them: each job's module, the names
of its params in the order its `train` takes them, and its 27-grid."""

import late
import train

JOBS = {
    "train": {"module": train, "params": ("lr", "wd", "aug"),
              "grid": {"lr": [1e-4, 5e-4, 1e-3], "wd": [1e-5, 5e-5, 1e-4], "aug": ["low", "medium", "high"]}},
    "late": {"module": late, "params": ("lr", "dropout", "width"), "grid": late.GRID},
}


def epochs(job):
    return JOBS[job]["module"].EPOCHS


def run(job, params, seed, report, log, key):
    """Trains `params` of `job`; logs when the trial function was entered (its start, for
    the per-trial start cost) beside `log`, then each epoch in `log`."""
    import json
    import os
    import time
    with open(os.path.join(os.path.dirname(log), "entered.jsonl"), "a") as out:
        out.write(json.dumps({"trial": key, "entered": time.time()}) + "\n")
    spec = JOBS[job]
    return spec["module"].train(*[params[name] for name in spec["params"]], seed, report, log=log, key=key)
