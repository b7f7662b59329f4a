#!/usr/bin/env python3
"""The fixture of `early_stop: {cutoff: rank}`'s test
(crates/core/src/sweep/early_stop/optuna_sh.json): Optuna's own SuccessiveHalvingPruner
deciding on seeded random reports, so tfimg's rank cutoff is checked against the rule it
follows, not against a reading of it.

Each case: `min_resource` and `reduction` (tfimg's `grace` and `reduction`), `steps` (a
full trial's epochs: below the next rung, so both judge at the same rungs), the study's
direction, and `reports`: [trial, epoch, value] in the order they were made, several
trials running at once and taking turns at random (a value of null: NaN, a trial that
diverged); a trial the pruner stops reports no more, and its last report is listed in
`pruned` as [trial, epoch].

    pip install optuna && python3 bench/search/optuna_sh_decisions.py
"""

import json
import math
import os
import random

import optuna

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates", "core", "src",
                   "sweep", "early_stop", "optuna_sh.json")
CASES = [
    # min_resource, reduction, steps, direction, trials, running at once, seed
    (1, 3, 12, "maximize", 24, 3, 1),
    (2, 2, 10, "maximize", 18, 2, 2),
    (1, 4, 12, "minimize", 20, 4, 3),
    (1, 3, 12, "maximize", 30, 5, 4),
]


def case(min_resource, reduction, steps, direction, count, running, seed):
    rng = random.Random(seed)
    study = optuna.create_study(direction=direction, pruner=optuna.pruners.SuccessiveHalvingPruner(
        min_resource=min_resource, reduction_factor=reduction))
    sign = 1 if direction == "maximize" else -1
    reports, pruned = [], []
    live = {}  # trial number -> (optuna trial, next epoch, curve)
    started = 0
    while started < count or live:
        while started < count and len(live) < running:
            trial = study.ask()
            base = rng.uniform(0.1, 0.6)
            slope = rng.uniform(0.0, 0.05)
            # Values rounded to 2 places: ties happen, as they do with accuracies.
            curve = [round(base + sign * slope * epoch + rng.uniform(-0.03, 0.03), 2) for epoch in range(1, steps + 1)]
            if trial.number % 7 == 3:  # diverges: NaN from an epoch on
                start = rng.randrange(steps)
                curve = curve[:start] + [math.nan] * (steps - start)
            live[trial.number] = (trial, 1, curve)
            started += 1
        number = rng.choice(sorted(live))
        trial, epoch, curve = live[number]
        value = curve[epoch - 1]
        trial.report(value, epoch)
        reports.append([number, epoch, None if math.isnan(value) else value])
        if trial.should_prune():
            pruned.append([number, epoch])
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            del live[number]
        elif epoch == steps:
            study.tell(trial, None if math.isnan(value) else value,
                       state=optuna.trial.TrialState.FAIL if math.isnan(value) else optuna.trial.TrialState.COMPLETE)
            del live[number]
        else:
            live[number] = (trial, epoch + 1, curve)
    return {"min_resource": min_resource, "reduction": reduction, "steps": steps, "direction": direction,
            "reports": reports, "pruned": pruned}


def main():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cases = [case(*spec) for spec in CASES]
    with open(OUT, "w") as out:
        out.write("{\"optuna\": " + json.dumps(optuna.__version__) + ", \"cases\": [\n")
        out.write(",\n".join(json.dumps(one, separators=(",", ":")) for one in cases))
        out.write("\n]}\n")
    for one in cases:
        print(f"{one['min_resource']},{one['reduction']} {one['direction']}: {len(one['reports'])} reports, "
              f"{len(one['pruned'])} pruned")


if __name__ == "__main__":
    main()
