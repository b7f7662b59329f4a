#!/usr/bin/env python3
"""Row 14c replayed: tfimg's TPE + its early stopping against Optuna's TPESampler + its
SuccessiveHalvingPruner on the recorded grids (bench/search/curves), over many searcher
seeds, so that a change to either side is measured on more than five live runs.

Both sides search the same 27 values of the job's grid (`choice` / `suggest_categorical`),
TPE_COUNT trials, TPE_STARTUP random first, SLOTS at a time. A trial of a param set runs its
recorded curve at that training seed: it starts its recorded launch after a slot is free,
reports each epoch at its recorded time, and is judged at each report (as replay.py). A
stopped trial frees its slot replay.STOP_S later.

- tfimg: the proposals are tfimg's own (`crates/core/examples/tpe_propose.rs`, the core's
  `Tpe::propose`, told what `tfimg sweep` tells it: ended trials with the value they
  reached, running ones as pending); the judge is replay.py's `Asha` (tfimg's rule,
  `early_stop: {max_epochs: N, grace: 1, reduction: 3}`, or `--rule` ARGS).
- Optuna (installed here: `pip install optuna`): one study in memory, one `TPESampler` per
  slot seeded as optuna_run.py seeds its workers (seed * 100 + worker), `ask` when the
  slot is free, `report` and `should_prune` at each epoch, `tell` at the end.

The figures per side and job: median over the runs of trial-epochs and of the best final
value (of trials that ran all their epochs), and the runs with a trial within 0.5 pp of
the grid's best. A run is a training seed (1-5, the recordings) and a searcher seed
(`--seeds`, default 1-20), so 100 runs per job and side by default.

    cargo build -p tfimg-core --example tpe_propose
    python3 bench/search/replay_tpe.py [--seeds 1-20] [--jobs late,train] [--sides tfimg,optuna]
"""

import argparse
import heapq
import json
import os
import statistics
import subprocess
import sys
import tempfile

import jobs
import replay

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import search_row  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
HELPER = os.environ.get("REPLAY_TPE_HELPER") or next((path for path in (os.path.join(TARGET, profile, "examples", "tpe_propose")
                                 for profile in ("release", "debug")) if os.path.exists(path)),
              "tpe_propose")


def key_of(params, names):
    return tuple(value if isinstance(value, str) else float(value) for value in (params[n] for n in names))


class TfimgSide:
    """tfimg's TPE through the helper process; ASHA as tfimg judges."""

    def __init__(self, job, seed, top, options):
        spec = search_row.JOBS[job]
        text = (f"sweep: replay\nimage: tfimg/replay:1\ncommand: [python, t.py]\n"
                f"tpe: {{count: {search_row.TPE_COUNT}, seed: {seed}, {spec['choices']}}}\n"
                f"objective: {{metric: val_accuracy, mode: max}}\n")
        self.file = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        self.file.write(text)
        self.file.close()
        self.helper = subprocess.Popen([HELPER, self.file.name], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
        self.judge = (replay.AshaTop if options.cutoff == "rank" else replay.Asha)(top, *options.rule)
        self.tell_pending = not options.no_pending
        self.trials = []  # params, in proposal order
        self.ended = {}  # trial -> value told
        self.running = set()

    def propose(self, slot):
        ended = sorted(self.ended.items())
        request = {"index": len(self.trials),
                   "ended": [[self.trials[t], v] for t, v in ended],
                   "pending": [self.trials[t] for t in sorted(self.running)] if self.tell_pending else [],
                   "taken": self.trials}
        self.helper.stdin.write(json.dumps(request) + "\n")
        self.helper.stdin.flush()
        params = json.loads(self.helper.stdout.readline())
        self.trials.append(params)
        self.running.add(len(self.trials) - 1)
        return len(self.trials) - 1, params

    def report(self, trial, epoch, value, seen):
        return self.judge.judge(trial, epoch, value, seen)

    def end(self, trial, value, pruned):
        self.running.discard(trial)
        self.ended[trial] = value

    def close(self):
        self.helper.stdin.close()
        self.helper.wait()
        os.unlink(self.file.name)


class OptunaSide:
    """Optuna's TPESampler per slot on one study, its SuccessiveHalvingPruner."""

    def __init__(self, job, seed, top, options):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.optuna = optuna
        storage = optuna.storages.InMemoryStorage()
        optuna.create_study(study_name="bench", storage=storage, direction="maximize")
        pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
        self.studies = [optuna.load_study(
            study_name="bench", storage=storage, pruner=pruner,
            sampler=optuna.samplers.TPESampler(seed=seed * 100 + worker, n_startup_trials=search_row.TPE_STARTUP))
            for worker in range(replay.SLOTS)]
        # The same choices, in the same order, as the live Optuna side (optuna_run.py).
        self.grid = jobs.JOBS[job]["grid"]
        self.live = {}

    def propose(self, slot):
        trial = self.studies[slot].ask()
        params = {name: trial.suggest_categorical(name, values) for name, values in self.grid.items()}
        self.live[trial.number] = (slot, trial)
        return trial.number, params

    def report(self, trial, epoch, value, seen):
        live = self.live[trial][1]
        live.report(value, epoch)
        return live.should_prune()

    def end(self, trial, value, pruned):
        slot, live = self.live.pop(trial)
        state = self.optuna.trial.TrialState.PRUNED if pruned else self.optuna.trial.TrialState.COMPLETE
        self.studies[slot].tell(live, None if pruned else value, state=state)

    def close(self):
        pass


def run(side, trials, names, top, count):
    """One replayed sweep of the recorded `trials` (keyed by the params `names`):
    (trial-epochs, best final value or None, finals)."""
    by_key = {key_of(t["params"], names): t for t in trials}
    events, seq, epochs, finals = [], 0, 0, []
    seen, gone = {}, set()
    started = 0

    def start(slot, at):
        nonlocal seq, started
        number, params = side.propose(slot)
        started += 1
        trial = by_key[key_of(params, names)]
        begin = at + trial["launch"]
        seen[number] = []
        curve = [p for p in trial["curve"] if p[0] <= top]
        for epoch, value, wall in curve:
            heapq.heappush(events, (begin + wall, seq, "report", number, slot, epoch, value))
            seq += 1
        heapq.heappush(events, (begin + curve[-1][2] + trial["tail"], seq, "end", number, slot, None, None))
        seq += 1

    for slot in range(min(replay.SLOTS, count)):
        start(slot, 0.0)
    while events:
        time, _, kind, number, slot, epoch, value = heapq.heappop(events)
        if number in gone:
            continue
        if kind == "end":
            gone.add(number)
            points = seen[number]
            final = [v for e, v in points if e == top]
            if final:
                finals.append(final[0])
            side.end(number, points[-1][1] if points else float("nan"), False)
            if started < count:
                start(slot, time)
            continue
        epochs += 1
        seen[number].append((epoch, value))
        if side.report(number, epoch, value, seen):
            if epoch == top:  # Optuna judges a rung at the last epoch too: it ran them all
                finals.append(value)
            gone.add(number)
            side.end(number, value, True)
            if started < count:
                start(slot, time + replay.STOP_S)
    side.close()
    return epochs, max(finals, default=None), finals


def seeds_of(text):
    out = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1-20", help="searcher seeds, e.g. 1-20 or 1,4,9")
    parser.add_argument("--jobs", default="late,train")
    parser.add_argument("--sides", default="tfimg,optuna")
    parser.add_argument("--rule", default="1,3", help="tfimg's ASHA grace,reduction (row 14c's: 1,3)")
    parser.add_argument("--json", help="write every run here")
    parser.add_argument("--cutoff", default="rank", choices=["quantile", "rank"],
                        help="tfimg's ASHA cutoff: `rank` (bench row 14c's, as Optuna's pruner) or `quantile` (Ray Tune's)")
    parser.add_argument("--no-pending", action="store_true", help="tell tfimg's TPE no running trials")
    args = parser.parse_args()
    args.rule = tuple(int(x) for x in args.rule.split(","))
    recorded = replay.load()
    out = {}
    for job in args.jobs.split(","):
        names = search_row.JOBS[job]["params"]
        seeds = recorded[job]
        for side_name in args.sides.split(","):
            runs = []
            for training_seed, (top, trials, best) in sorted(seeds.items()):
                for searcher in seeds_of(args.seeds):
                    seed = searcher if searcher != 0 else training_seed
                    side = {"tfimg": TfimgSide, "optuna": OptunaSide}[side_name](job, seed, top, args)
                    epochs, top_value, finals = run(side, trials, names, top, search_row.TPE_COUNT)
                    hit = top_value is not None and top_value >= best - replay.WITHIN
                    runs.append({"training_seed": training_seed, "searcher_seed": seed, "trial_epochs": epochs,
                                 "best": top_value, "hit": hit, "completed": len(finals)})
            epochs = [r["trial_epochs"] for r in runs]
            bests = [r["best"] for r in runs if r["best"] is not None]
            q = statistics.quantiles(epochs, n=4)
            print(f"{job:5} {side_name:6} runs {len(runs):3}: trial-epochs median {statistics.median(epochs):5.1f} "
                  f"[q1 {q[0]:.0f}, q3 {q[2]:.0f}] mean {statistics.mean(epochs):5.1f}; best median "
                  f"{statistics.median(bests):.4f} mean {statistics.mean(bests):.4f}; hits {sum(r['hit'] for r in runs)}; "
                  f"completed median {statistics.median(r['completed'] for r in runs)}", flush=True)
            out.setdefault(job, {})[side_name] = runs
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
