#!/usr/bin/env python3
"""Early-stopping rules replayed on recorded sweeps: which rule would have found the grid's
best, and with how many trial-epochs, without running a sweep per rule.

The recordings: bench/search/curves/JOB-SEED.json, the full 27-grid of a bench job run by
`tfimg sweep` with 2 slots (bench/search_row.py --curves): each trial's curve (epoch,
value, wall time since its start), how long its launch took (from the slot being free to
the journal's `trial_started`) and how long it took to end after its last epoch.

The replay: a sweep with SLOTS slots, trials started first in, first out in the grid's
order; a trial starts when a slot is free, after its recorded launch; its epochs come at
their recorded times after its start; each report is judged when it comes (as tfimg judges
each new metrics line), and a stopped trial frees its slot STOP_S later. The rules:

- `asha`, `median`: tfimg's, as crates/core/src/sweep/early_stop.rs implements them (rungs
  grace × reduction^k below max_epochs; the cutoff is numpy's linear quantile
  1 - 1/reduction of the values recorded at the rung before; the first trial at a rung goes
  on; a stopped trial's value stays recorded. Median: from `grace`, the trial's best so far
  against the median of the other trials' running averages up to that epoch, over the
  others that reached it, once at least `min_trials` did; not judged at or after
  max_epochs).
- `hyperband`: ASHA over several brackets as Ray Tune's `AsyncHyperBandScheduler(brackets=n)`
  (ray/tune/schedulers/async_hyperband.py, Ray 2.60): bracket s has rungs
  grace × reduction^(k+s), its own recorded values, and a trial goes to bracket s with
  probability ∝ e^(rungs_s - most rungs) (Ray draws it at random: replayed over DRAWS
  draws, a hit counted when most draws hit) or, `rr`, in turn as tfimg does (the i-th
  trial started, from 0, to bracket i mod n, deterministic).

For each candidate, job and seed: trial-epochs as a fraction of the grid's, and whether a
trial that ran all its epochs is within WITHIN of the grid's best. `--max N` replays the
recordings cut at N epochs (a job that trains N epochs; its grid's best taken at N), to see
how a rule's settings scale with max_epochs.

    python3 bench/search/replay.py [--max N] [--only NAME,...] [--trace CANDIDATE] [--json FILE]
    python3 bench/search/replay.py --ranks
"""

import argparse
import glob
import heapq
import json
import math
import os
import random
import statistics
import sys

SLOTS = 2
WITHIN = 0.005
STOP_S = 0.5
DRAWS = 21
HERE = os.path.dirname(os.path.abspath(__file__))


def quantile(values, q):
    """numpy's linear percentile, as early_stop.rs's `quantile`; None of none."""
    values = sorted(v for v in values if not math.isnan(v))
    if not values:
        return None
    position = min(max(q, 0.0), 1.0) * (len(values) - 1)
    lower, upper = math.floor(position), math.ceil(position)
    return values[lower] + (values[upper] - values[lower]) * (position - lower)


class Asha:
    """tfimg's ASHA (early_stop.rs `Judge::asha`), one bracket; values are scores (max)."""

    def __init__(self, max_epochs, grace, reduction):
        self.max_epochs, self.reduction = max_epochs, reduction
        self.rule_rungs = []
        rung = max(grace, 1)
        while rung < max_epochs:
            self.rule_rungs.append(rung)
            rung *= max(reduction, 2)
        self.rungs = {}
        self.reached = {}

    def judge(self, trial, at, value, others):
        if at >= self.max_epochs:
            return False
        recorded = self.reached.get(trial)
        eligible = [r for r in self.rule_rungs if r <= at and (recorded is None or r > recorded)]
        if not eligible:
            return False
        rung = max(eligible)
        self.reached[trial] = max(rung, recorded or rung)
        before = self.rungs.setdefault(rung, [])
        stop = self.stops(value, before)
        before.append(value)
        return stop

    def stops(self, value, before):
        """`cutoff: quantile` (Ray Tune's rule): below the 1 - 1/reduction quantile of the
        values recorded at the rung before it."""
        cutoff = quantile(before, 1.0 - 1.0 / self.reduction)
        return cutoff is not None and value < cutoff


class AshaTop(Asha):
    """ASHA with `cutoff: rank` (Optuna's SuccessiveHalvingPruner)."""

    def stops(self, value, before):
        """Outside the top max(1, n // reduction) of the n values recorded at the rung, its
        own included."""
        ranked = sorted(before + [value], reverse=True)
        return value < ranked[max(len(ranked) // self.reduction, 1) - 1]


class RayBracket:
    """One bracket of Ray Tune's AsyncHyperBandScheduler (`_Bracket`, stop_last_trials)."""

    def __init__(self, grace, max_epochs, reduction, s):
        count = int(math.log(max_epochs / grace) / math.log(reduction) - s + 1)
        self.rungs = [(grace * reduction ** (k + s), {}) for k in reversed(range(count))]
        self.reduction = reduction

    def on_result(self, trial, at, value):
        for milestone, recorded in self.rungs:
            if at < milestone or trial in recorded:
                continue
            values = list(recorded.values())
            cutoff = quantile(values, 1 - 1 / self.reduction) if values else None
            recorded[trial] = value
            return cutoff is not None and value < cutoff
        return False


class Hyperband:
    """ASHA over `brackets` brackets, Ray Tune's way; `assign`: `ray` (random, Ray's
    softmax over the brackets' rung counts, from `draw`'s seed) or `rr` (in turn)."""

    def __init__(self, max_epochs, grace, reduction, brackets, assign, draw=0):
        self.max_epochs = max_epochs
        self.brackets = [RayBracket(grace, max_epochs, reduction, s) for s in range(brackets)]
        self.assign, self.random = assign, random.Random(draw)
        self.of = {}

    def bracket(self, trial, index):
        if trial not in self.of:
            if self.assign == "rr":
                self.of[trial] = self.brackets[index % len(self.brackets)]
            else:
                sizes = [len(b.rungs) for b in self.brackets]
                weights = [math.e ** (size - max(sizes)) for size in sizes]
                self.of[trial] = self.random.choices(self.brackets, weights)[0]
        return self.of[trial]

    def judge(self, trial, at, value, others, index=0):
        if at >= self.max_epochs:
            return False  # Ray stops it as done (stop_last_trials); it ends anyway
        return self.bracket(trial, index).on_result(trial, at, value)


class Median:
    """tfimg's median stopping rule (early_stop.rs `Judge::median`)."""

    def __init__(self, grace, min_trials, max_epochs):
        self.grace, self.min_trials, self.max_epochs = grace, min_trials, max_epochs

    def judge(self, trial, at, value, others):
        if at < self.grace or (self.max_epochs is not None and at >= self.max_epochs):
            return False
        best = max(v for e, v in others[trial] if e <= at)
        averages = []
        for name, points in others.items():
            if name == trial or not points or points[-1][0] < at:
                continue
            upto = [v for e, v in points if e <= at]
            averages.append(sum(upto) / len(upto))
        if len(averages) < max(self.min_trials, 1):
            return False
        return best < quantile(averages, 0.5)


def simulate(trials, rule, max_epochs, trace=None, order=None):
    """One replayed sweep, trials started in `order` (default: the grid's): (trial-epochs,
    [(trial, final value)] of trials that ran all their epochs, wall seconds, {trial:
    epoch it was stopped at})."""
    clock, events, seq = 0.0, [], 0
    seen = {}  # what each trial reported so far, as the judge sees it
    queue = list(order or range(len(trials)))
    epochs, finished, stopped = 0, [], {}
    position = {}  # each trial's place in the start order, from 0 (its `rr` bracket)

    def start(slot_time):
        nonlocal seq
        index = queue.pop(0)
        position[index] = len(position)
        trial = trials[index]
        begin = slot_time + trial["launch"]
        seen[trial["id"]] = []
        curve = [p for p in trial["curve"] if p[0] <= max_epochs]
        for epoch, value, wall in curve:
            heapq.heappush(events, (begin + wall, seq, "report", index, epoch, value))
            seq += 1
        end = begin + (curve[-1][2] + trial["tail"] if curve else 0.0)
        heapq.heappush(events, (end, seq, "end", index, None, None))
        seq += 1

    for slot in range(min(SLOTS, len(queue))):
        start(0.0)
    gone = set()
    while events:
        time, _, kind, index, epoch, value = heapq.heappop(events)
        if index in gone:
            continue
        trial = trials[index]
        if kind == "end":
            gone.add(index)
            final = [v for e, v in seen[trial["id"]] if e == max_epochs]
            if final:
                finished.append((trial["id"], final[0]))
            clock = time
            if queue:
                start(time)
            continue
        epochs += 1
        seen[trial["id"]].append((epoch, value))
        if isinstance(rule, Hyperband):
            stop = rule.judge(trial["id"], epoch, value, seen, position[index])
        else:
            stop = rule.judge(trial["id"], epoch, value, seen)
        if stop:
            stopped[trial["id"]] = epoch
            gone.add(index)
            clock = time + STOP_S
            if trace:
                print(f"    {trial['id']} {trial['params']} stopped at epoch {epoch} ({value:.4f})", file=trace)
            if queue:
                start(clock)
    return epochs, finished, clock, stopped


def load(max_epochs=None):
    """The recordings, by job then seed: (max_epochs, trials, grid's best)."""
    jobs = {}
    for path in sorted(glob.glob(os.path.join(HERE, "curves", "*-*.json"))):
        record = json.load(open(path))
        top = max_epochs or record["max_epochs"]
        trials = []
        for trial in record["trials"]:
            started = trial["started"]
            curve = [(e, v, w - started) for e, v, w in trial["curve"] if e <= top]
            trials.append({"id": trial["id"], "params": trial["params"], "curve": curve,
                           "launch": trial["launch"],
                           "tail": (trial["finished"] - trial["curve"][-1][2]) if trial["curve"] else 0.0})
        best = max(v for t in trials for e, v, _ in t["curve"] if e == top)
        jobs.setdefault(record["job"], {})[record["seed"]] = (top, trials, best)
    return jobs


GRACES = (("1", lambda m: 1), ("2", lambda m: 2), ("m/4", lambda m: max(1, m // 4)),
          ("m/3", lambda m: max(1, m // 3)), ("m/2", lambda m: max(1, m // 2)))


def candidates(max_epochs):
    """(name, factory) of every rule replayed; factory(draw) -> a fresh judge. Names do
    not depend on max_epochs (`m`): a grace of m/4 is 2 of 9 epochs, 3 of 12."""
    m = max_epochs
    out = []
    for reduction in (2, 3, 4):
        for label, grace in GRACES:
            if label != "2":
                out.append((f"asha grace {label} r{reduction}", lambda d, g=grace(m), r=reduction: Asha(m, g, r)))
                out.append((f"asha rank grace {label} r{reduction}",
                            lambda d, g=grace(m), r=reduction: AshaTop(m, g, r)))
    for brackets in (2, 3):
        for reduction in (2, 3, 4):
            for assign in ("rr", "ray"):
                out.append((f"hyperband b{brackets} r{reduction} grace 1 {assign}",
                            lambda d, b=brackets, r=reduction, a=assign: Hyperband(m, 1, r, b, a, d)))
    for label, grace in GRACES:
        if label != "1":
            for min_trials in (3, 5):
                out.append((f"median grace {label} n{min_trials}",
                            lambda d, g=grace(m), n=min_trials: Median(g, n, m)))
    return out


def evaluate(jobs, only=None, trace=None, orders=0):
    """{candidate: {job: [(seed, fraction, hit, stopped)]}}. With `orders`, each seed is
    replayed in that many random orders of its trials instead of the grid's (as TPE or a
    random search would start them): `hit` is then the share of orders that hit, and
    `fraction` the median."""
    table = {}
    for job, seeds in sorted(jobs.items()):
        for seed, (top, trials, best) in sorted(seeds.items()):
            grid = len(trials) * top
            if orders:
                runs = [(k, random.Random(seed * 1000 + k).sample(range(len(trials)), len(trials)))
                        for k in range(orders)]
            for name, factory in candidates(top):
                if only and name not in only:
                    continue
                if not orders:
                    runs = [(draw, None) for draw in (range(DRAWS) if "ray" in name.split() else [0])]
                fractions, hits, stops = [], [], {}
                for draw, order in runs:
                    traced = sys.stdout if trace and name in trace else None
                    if traced:
                        print(f"  {job} seed {seed} {name}:", file=traced)
                    epochs, finished, clock, stopped = simulate(trials, factory(draw), top, traced, order)
                    fractions.append(epochs / grid)
                    hits.append(any(v >= best - WITHIN for _, v in finished))
                    stops = stopped
                hit = sum(hits) / len(hits) if orders else sum(hits) > len(hits) / 2
                table.setdefault(name, {}).setdefault(job, []).append(
                    (seed, statistics.median(fractions), hit, stops))
    return table


def ranks(jobs):
    """Per job and seed, the final top 3 and their ranks among the grid at epochs 1, 3,
    half-way and the last: a late-bloomer job's best rank low early."""
    for job, seeds in sorted(jobs.items()):
        for seed, (top, trials, best) in sorted(seeds.items()):
            at = lambda trial, epoch: next(v for e, v, _ in trial["curve"] if e == epoch)
            marks = sorted({1, 3, top // 2, top})
            order = {m: sorted(trials, key=lambda t: -at(t, m)) for m in marks}
            final = order[top]
            third = len(trials) // 3
            print(f"{job} seed {seed}: top third = ranks 1-{third}; clear losers (final < best - 10 pp): "
                  f"{sum(at(t, top) < best - 0.10 for t in trials)} of {len(trials)}")
            for trial in final[:3]:
                where = ", ".join(f"{m}: {order[m].index(trial) + 1}" for m in marks)
                print(f"  {trial['id']} {json.dumps(trial['params'], separators=(',', ':'))} final {at(trial, top):.4f}; "
                      f"rank at epoch {where}; epoch 1 value {at(trial, 1):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", action="store_true", help="the grid's final top 3 and their ranks by epoch")
    parser.add_argument("--max", type=int, help="replay as if the job trained this many epochs")
    parser.add_argument("--only", help="candidates, comma-separated")
    parser.add_argument("--trace", help="print the stops of these candidates, comma-separated")
    parser.add_argument("--json", help="write the table here")
    parser.add_argument("--orders", type=int, default=0,
                        help="replay each seed in this many random orders of its trials instead of the grid's")
    args = parser.parse_args()
    jobs = load(args.max)
    if args.ranks:
        return ranks(jobs)
    only = set(args.only.split(",")) if args.only else None
    trace = set(args.trace.split(",")) if args.trace else None
    table = evaluate(jobs, only, trace, args.orders)
    names = sorted(jobs)
    seeds = {job: len(jobs[job]) for job in names}
    print(("in random orders, " + str(args.orders) + " per seed (hits: expected seeds hit); " if args.orders else "in the grid's order; ") + f"{SLOTS} slots, {', '.join(f'{job}: {seeds[job]} seeds, {next(iter(jobs[job].values()))[0]} epochs' for job in names)};"
          f" hit: a trial that ran all its epochs is within {WITHIN * 100:g} pp of the grid's best")
    print("target: hits >= 4 of 5 and median fraction <= 0.55 on every job; graces: " + "; ".join(
        f"{job}: " + ", ".join(f"{label} = {grace(next(iter(jobs[job].values()))[0])}" for label, grace in GRACES)
        for job in names))
    header = f"{'candidate':34}" + "".join(f" | {job + ' hits':>10} {'med':>5} {'max':>5}" for job in names) + " | meets"
    print(header)
    print("-" * len(header))
    out = {}
    for name, by_job in table.items():
        cells, meets = [], True
        for job in names:
            rows = by_job.get(job, [])
            hits = sum(hit for _, _, hit, _ in rows)  # with --orders: expected seeds hit
            fractions = [fraction for _, fraction, _, _ in rows]
            med, top = statistics.median(fractions), max(fractions)
            meets = meets and hits >= 0.8 * len(rows) and med <= 0.55
            cells.append(f" | {hits:>5.3g} of {len(rows)} {med:5.2f} {top:5.2f}")
            out.setdefault(name, {})[job] = {"hits": hits, "seeds": len(rows), "median_fraction": med,
                                             "max_fraction": top,
                                             "per_seed": [{"seed": s, "fraction": f, "hit": h, "stopped": st}
                                                          for s, f, h, st in rows]}
        out[name]["meets"] = meets
        print(f"{name:34}" + "".join(cells) + (" | yes" if meets else " |"))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
