"""`just bench`'s row 14: sweeps that learn, side by side on this machine's CPU slots.

Two jobs, each a 27-grid, one core per trial, `val_accuracy` after each epoch:

- `train` (bench/search/train.py): a small Keras CNN on a synthetic image set, 9 epochs;
  lr {1e-4, 5e-4, 1e-3} × wd {1e-5, 5e-5, 1e-4} × aug {low, medium, high} (lr 1e-4 and
  augmentation that does not fit the data are clear losers; the best lead early);
- `late` (bench/search/late.py): a Keras MLP on 10 noisy classes, 12 epochs;
  lr {2e-4, 1e-3, 3e-3} × dropout {0, 0.4, 0.75} × width {32, 128, 512}, whose best
  settings start slowly and finish on top (late bloomers): early stopping that judges
  too early stops them.

Each grid's numbers are listed in ascending order as a user would (so the best is not the
first trial). Every contender runs in the same image (`tfbench-search`:
tf218-cpu-headless with `ray[tune]` and `optuna`), with SLOTS trials at a time:

- `grid`: tfimg full grid (`params:`), the baseline, whose best final value is the reference;
- `grid-es`: tfimg grid + the default early stopping (EARLY_STOP), which tfimg runs in a
  shuffled order (a grid with `early_stop`);
- `tpe-es`: tfimg TPE (TPE_COUNT trials, default startup) + the default early stopping;
- `tpe-sh`: the same with early stopping set as the Optuna side's pruner (EARLY_STOP_AS_OPTUNA:
  ASHA from epoch 1, reduction 3, `cutoff: rank`), to compare the two TPEs under the same
  pruning;
- `ray-asha`: Ray Tune, the grid under `ASHAScheduler` (grace 1, reduction 3; search/ray_tune.py);
- `optuna-sh`: Optuna, TPE_COUNT trials, `TPESampler` (TPE_STARTUP random trials first, as
  tfimg's TPE) + `SuccessiveHalvingPruner` (search/optuna_run.py);
- `optuna-median`: the same with `MedianPruner` (its defaults).

For each, per job and seed (the training seed and every searcher's): the wall time from
launching the command until a trial ends all its epochs within 0.5 percentage points of
the full grid's best at that seed, the trial-epochs run in all, the best final value
reached, and the per-trial start cost: from a trial's start (tfimg: the journal's
`trial_started`, after its container started; Ray Tune and Optuna: when the trial function
is entered) to its first epoch's report, the median over its trials. Medians over the
seeds go to bench/results.json (rows 14a-14d, with their targets) and every figure to
bench/search.md.

Environment: TFIMG_BENCH_SEARCH_SEEDS (default 1,2,3,4,5), TFIMG_BENCH_SEARCH_JOBS
(default train,late), TFIMG_BENCH_SEARCH_CONTENDERS (default all, by the keys above). When
`grid` is left out, the reference is the recorded grid's (bench/search/curves).

`python3 bench/search_row.py --curves [JOB,...]` runs only the full grids, at the seeds
above, and writes every trial's curve, start and end to bench/search/curves/JOB-SEED.json,
what bench/search/replay.py replays early-stopping rules on (the image must be built).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEEDS = [int(seed) for seed in os.environ.get("TFIMG_BENCH_SEARCH_SEEDS", "1,2,3,4,5").split(",")]
SLOTS = 2
TPE_COUNT = 15
# The random trials before TPE proposes, on both sides: tfimg's default for TPE_COUNT
# trials (a third, `tpe::default_startup`), given to Optuna's `TPESampler` too (its own
# default is 10 whatever the count), so the two TPEs learn from the same number of draws.
TPE_STARTUP = 5
WITHIN = 0.005
IMAGE = "tfimg/tfbench-search:2.18.1"
CODE = Path(__file__).resolve().parent / "search"
CURVES = CODE / "curves"
# The default early stopping, in ONE place: what `early_stop:` says for the jobs' sweeps
# (`{epochs}`: the job's epochs): `max_epochs` alone, tfimg's default rule (ASHA, grace a
# quarter of it, reduction 3, one bracket; bench/search/replay.md).
EARLY_STOP = "{{max_epochs: {epochs}}}"
# What the Optuna side's `SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)` does,
# as tfimg's `early_stop:` says it (rungs at epoch 1, 3, 9, ...; the top third by rank goes
# on, Optuna's rule: crates/core/src/sweep/early_stop.rs checks it against Optuna's own
# decisions).
EARLY_STOP_AS_OPTUNA = "{{max_epochs: {epochs}, grace: 1, reduction: 3, cutoff: rank}}"

# Per job: the script, its epochs, the grid (numbers in ascending order, as a user lists
# them, so the grid's best is not its first trial; the axes in the order Ray Tune expands
# its `grid_search` (by name, the first varying fastest), so both grids run the same
# trials in the same order), the same values as `tpe:` choices, and the command's flags.
JOBS = {
    "train": {
        "script": "train.py", "epochs": 9,
        "grid": "wd: [1e-5, 5e-5, 1e-4]\n  lr: [1e-4, 5e-4, 1e-3]\n  aug: [low, medium, high]",
        "choices": "lr: {choice: [1e-4, 5e-4, 1e-3]}, wd: {choice: [1e-5, 5e-5, 1e-4]}, aug: {choice: [low, medium, high]}",
        "params": ("lr", "wd", "aug"),
    },
    "late": {
        "script": "late.py", "epochs": 12,
        "grid": "width: [32, 128, 512]\n  lr: [2e-4, 1e-3, 3e-3]\n  dropout: [0.0, 0.4, 0.75]",
        "choices": "lr: {choice: [2e-4, 1e-3, 3e-3]}, dropout: {choice: [0.0, 0.4, 0.75]}, width: {choice: [32, 128, 512]}",
        "params": ("lr", "dropout", "width"),
    },
}
VERSIONS = []
JOB_NAMES = os.environ.get("TFIMG_BENCH_SEARCH_JOBS", ",".join(JOBS)).split(",")


def early_stop(job, setting=EARLY_STOP):
    epochs = JOBS[job]["epochs"]
    return "early_stop: " + setting.format(epochs=epochs) + "\n"


def sweep_text(name, job, search, seed, early):
    flags = ", ".join(f'--{param}, "{{{param}}}"' for param in JOBS[job]["params"])
    return (
        f"sweep: {name}\nimage: {IMAGE}\n"
        f"command: [python, /bench/{JOBS[job]['script']}, {flags}]\n"
        "mounts: [\"./code:/bench:ro\"]\n"
        f"env: {{BENCH_SEED: \"{seed}\"}}\n"
        f"{search}\nmax_parallel: {SLOTS}\nobjective: {{metric: val_accuracy, mode: max}}\n"
        f"{early}"
    )


def record(folder, name, events=()):
    """What a tfimg sweep did, from its journal, its trials' metrics and the Engine's
    events of its containers: the sweep's start and, per trial in id order, its params,
    when its container was created and started (Engine), when the journal says it started
    and finished, and its curve [(epoch, value, wall)]; times in seconds since the epoch."""
    runs = folder / "runs" / name
    trials, swept = {}, None
    for line in (runs / "journal.jsonl").read_text().splitlines():
        event = json.loads(line)
        kind, at = event["event"], event.get("time_ms", 0) / 1000
        if kind == "sweep_started" and swept is None:
            swept = at
        if kind == "trial_started":
            trials.setdefault(event["trial"], {})
            trials[event["trial"]].update(started=at, container=event["container"])
        if kind == "trial_finished":
            trials.setdefault(event["trial"], {})["finished"] = at
    by_name = {}
    for event in events:
        attributes = event.get("Actor", {}).get("Attributes", {})
        by_name.setdefault(attributes.get("name"), {}).setdefault(event.get("Action"), event["timeNano"] / 1e9)
    out = []
    for trial in sorted(trials):
        place = runs / trial
        params = json.loads((place / "params.json").read_text()) if (place / "params.json").exists() else {}
        curve = []
        metrics = place / "metrics.jsonl"
        for line in (metrics.read_text().splitlines() if metrics.exists() else []):
            point = json.loads(line)
            curve.append((point["epoch"], point["val_accuracy"], point["wall"]))
        engine = by_name.get(trials[trial].get("container"), {})
        out.append(dict(trials[trial], id=trial, params=params, curve=curve,
                        created=engine.get("create"), container_started=engine.get("start")))
    return swept, out


def tfimg_side(kind):
    """A tfimg contender: runs its sweep; (t0, epochs, start costs, record)."""
    def run(folder, job, seed, sh, tfimg):
        name = f"tfbench-{kind}-{job}-{seed}"
        search = {
            "grid": f"params:\n  {JOBS[job]['grid']}",
            "grid-es": f"params:\n  {JOBS[job]['grid']}",
            "tpe-es": f"tpe: {{count: {TPE_COUNT}, seed: {seed}, {JOBS[job]['choices']}}}",
            "tpe-sh": f"tpe: {{count: {TPE_COUNT}, seed: {seed}, {JOBS[job]['choices']}}}",
        }[kind]
        early = {"grid": "", "grid-es": early_stop(job), "tpe-es": early_stop(job),
                 "tpe-sh": early_stop(job, EARLY_STOP_AS_OPTUNA)}[kind]
        (folder / "sweep.yaml").write_text(sweep_text(name, job, search, seed, early))
        watch = subprocess.Popen(
            ["docker", "events", "--format", "{{json .}}", "--filter", "type=container",
             "--filter", f"label=io.tfimg.sweep={name}"], stdout=subprocess.PIPE, text=True)
        try:
            start = time.time()
            sh(tfimg, "sweep", "sweep.yaml", cwd=folder)
        finally:
            time.sleep(1)
            watch.terminate()
            seen = watch.communicate()[0]
        events = [json.loads(line) for line in seen.splitlines() if line.startswith("{")]
        swept, trials = record(folder, name, events)
        epochs = [(trial["id"], epoch, value, wall) for trial in trials for epoch, value, wall in trial["curve"]]
        costs = [trial["curve"][0][2] - trial["started"] for trial in trials if trial["curve"] and "started" in trial]
        return start, epochs, costs, (swept, trials)
    return run


def container_side(script, *extra):
    """A contender that runs in one container of the bench image, as its users run it."""
    def run(folder, job, seed, sh, tfimg):
        log_dir = folder / "log"
        log_dir.mkdir()
        os.chmod(log_dir, 0o777)
        start = time.time()
        sh("docker", "run", "--rm", "--label", "io.tfimg.bench=1", "--shm-size", "1g",
           "-e", "PYTHONPATH=/bench", "-v", f"{folder / 'code'}:/bench:ro", "-v", f"{log_dir}:/log",
           IMAGE, "python", f"/bench/{script}", "--job", job, "--seed", str(seed), "--log", "/log/epochs.jsonl",
           "--slots", str(SLOTS), *extra)
        epochs, entered = [], {}
        for name, into in (("epochs.jsonl", epochs), ("entered.jsonl", None)):
            log = log_dir / name
            for line in (log.read_text().splitlines() if log.exists() else []):
                point = json.loads(line)
                if into is None:
                    entered.setdefault(point["trial"], point["entered"])
                else:
                    into.append((point["trial"], point["epoch"], point["val_accuracy"], point["wall"]))
        firsts = {}
        for trial, epoch, _, wall in epochs:
            if epoch == 1:
                firsts.setdefault(trial, wall)
        costs = [firsts[trial] - entered[trial] for trial in firsts if trial in entered]
        return start, epochs, costs, None
    return run


CONTENDERS = {
    "grid": ("tfimg full grid", tfimg_side("grid")),
    "grid-es": ("tfimg grid + default early stop", tfimg_side("grid-es")),
    "tpe-es": ("tfimg TPE + default early stop", tfimg_side("tpe-es")),
    "tpe-sh": ("tfimg TPE + early stop from epoch 1 (as Optuna's pruner)", tfimg_side("tpe-sh")),
    "ray-asha": ("Ray Tune grid + ASHAScheduler", container_side("ray_tune.py")),
    "optuna-sh": ("Optuna TPESampler + SuccessiveHalvingPruner",
                  container_side("optuna_run.py", "--count", str(TPE_COUNT), "--startup", str(TPE_STARTUP),
                                 "--pruner", "sh")),
    "optuna-median": ("Optuna TPESampler + MedianPruner",
                      container_side("optuna_run.py", "--count", str(TPE_COUNT), "--startup", str(TPE_STARTUP),
                                     "--pruner", "median")),
}
CHOSEN = [key for key in os.environ.get("TFIMG_BENCH_SEARCH_CONTENDERS", ",".join(CONTENDERS)).split(",")]


def summary(start, epochs, costs, reference, last):
    """What one run did: time to a trial within WITHIN of `reference`, trial-epochs, best,
    the median per-trial start cost."""
    finals = [(wall, value) for _, epoch, value, wall in epochs if epoch == last]
    hits = [wall for wall, value in finals if reference is not None and value >= reference - WITHIN]
    return {
        "to_best_s": (min(hits) - start) if hits else None,
        "trial_epochs": len(epochs),
        "best": max((value for _, value in finals), default=None),
        "wall_s": (max(wall for *_, wall in epochs) - start) if epochs else None,
        "start_cost_s": statistics.median(costs) if costs else None,
    }


def stats(values):
    values = [value for value in values if value is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def build(folder, sh, tfimg, ca):
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    (images / "tfbench-search.yaml").write_text(
        "name: tfbench-search\nextends: tf218-cpu-headless\npackages:\n  pip: [\"ray[tune]\", optuna]\n")
    sh(tfimg, "build", "tfbench-search", "--ca-cert", ca, "--progress", "plain", cwd=folder)
    # The image installs the newest Ray and Optuna: search.md says which ran.
    VERSIONS[:] = [subprocess.run(
        ["docker", "run", "--rm", IMAGE, "python", "-c",
         "import optuna, ray; print(f'Optuna {optuna.__version__}, Ray {ray.__version__}')"],
        capture_output=True, text=True).stdout.strip() or "Optuna and Ray versions unknown"]


def place_of(folder, tag):
    place = folder / tag
    shutil.rmtree(place, ignore_errors=True)
    place.mkdir(parents=True)
    shutil.copytree(CODE, place / "code", ignore=shutil.ignore_patterns("__pycache__", "curves", "replay.py"))
    return place


def recorded_reference(job, seed):
    path = CURVES / f"{job}-{seed}.json"
    if not path.exists():
        return None
    last = JOBS[job]["epochs"]
    return max(point[1] for trial in json.loads(path.read_text())["trials"] for point in trial["curve"] if point[0] == last)


def recorded_grid(job, seed, reference):
    """The full grid's figure at `seed` from its recording (bench/search/curves), for a run
    that leaves `grid` out; times from the recorded sweep's start."""
    path = CURVES / f"{job}-{seed}.json"
    if not path.exists():
        return None
    trials = json.loads(path.read_text())["trials"]
    epochs = [(trial["id"], epoch, value, wall) for trial in trials for epoch, value, wall in trial["curve"]]
    costs = [trial["curve"][0][2] - trial["started"] for trial in trials if trial["curve"]]
    figure = summary(0.0, epochs, costs, reference, JOBS[job]["epochs"])
    figure["seed"], figure["reference"], figure["recorded"] = seed, reference, True
    return figure


def row(work, runs, sh, tfimg, ca):
    folder = work / "search"
    build(folder, sh, tfimg, ca)
    figures = {job: {CONTENDERS[key][0]: [] for key in CHOSEN} for job in JOB_NAMES}
    for job in JOB_NAMES:
        last = JOBS[job]["epochs"]
        for seed in SEEDS:
            reference = None if "grid" in CHOSEN else recorded_reference(job, seed)
            if "grid" not in CHOSEN and reference is not None:
                figures[job].setdefault(CONTENDERS["grid"][0], []).append(recorded_grid(job, seed, reference))
            for key in CHOSEN:
                name, contender = CONTENDERS[key]
                place = place_of(folder, f"{key}-{job}-{seed}")
                start, epochs, costs, _ = contender(place, job, seed, sh, tfimg)
                if key == "grid":
                    reference = max(value for _, epoch, value, _ in epochs if epoch == last)
                figure = summary(start, epochs, costs, reference, last)
                figure["seed"], figure["reference"] = seed, reference
                figures[job][name].append(figure)
                print(f"  {job} seed {seed} {name}: {figure}", flush=True)
                shutil.rmtree(place, ignore_errors=True)
            write_markdown(figures)  # so far: a run cut short keeps what it measured
    write_markdown(figures)
    return rows_of(figures)


def median_of(runs, key):
    return stats([figure[key] for figure in runs])


def rows_of(figures):
    grid, es, tpe = "tfimg full grid", "tfimg grid + default early stop", "tfimg TPE + default early stop"
    tpe_sh = CONTENDERS["tpe-sh"][0]
    ray, optuna = "Ray Tune grid + ASHAScheduler", "Optuna TPESampler + SuccessiveHalvingPruner"
    rows = []

    def pair(job, name, ours, theirs, key, unit, target, spec=".0f", higher=False):
        runs = figures[job]
        if ours not in runs or theirs not in runs:
            return None
        mine, other = median_of(runs[ours], key), median_of(runs[theirs], key)
        reached = lambda side: sum(figure[key] is not None for figure in runs[side])
        row = {"name": name, "unit": unit, "target": target, "tfimg": mine, "alternative": other,
               "ratio": (mine["median"] / other["median"]) if mine and other else float("inf")}
        if higher and not (mine and other):
            row["ratio"] = 0.0
        count = len(runs[ours])
        cell = lambda values, side: "-" if values is None else (
            f"{format(values['median'], spec)}{' ' + unit if unit else ''} [{format(values['min'], spec)}–{format(values['max'], spec)}]"
            + ("" if reached(side) == len(runs[side]) else f" ({reached(side)} of {len(runs[side])} seeds reached it)"))
        row["cells"] = {"tfimg": cell(mine, ours), "alternative": cell(other, theirs)}
        row["seeds"] = count
        return row

    for job in JOB_NAMES:
        title = {"train": "the Keras CNN (train.py, 9 epochs)",
                 "late": "the late-bloomer MLP (late.py, 12 epochs)"}[job]
        row = pair(job, f"14a. trial-epochs of the 27-grid of {title}: tfimg grid + default early stop "
                        "(`early_stop: {max_epochs: N}`, tfimg's default rule) vs tfimg full grid; met only when it also ends a trial "
                        "within 0.5 pp of the grid's best in at least 4 of 5 seeds (bench/search.md)",
                   es, grid, "trial_epochs", "epochs", "<= 0.55")
        if row:
            hits = sum(figure["to_best_s"] is not None for figure in figures[job][es])
            row["met"] = row["ratio"] <= 0.55 and hits >= 0.8 * row["seeds"]
            row["ratio_text"] = f"{row['ratio']:.2f} ({hits} of {row['seeds']} seeds within 0.5 pp)"
            rows.append(row)
        rows.append(pair(job, f"14b. time to a trial within 0.5 pp of the grid's best, {title}: tfimg grid + "
                              "default early stop vs Ray Tune ASHAScheduler (same grid, same 2 slots)",
                         es, ray, "to_best_s", "s", "<= 1.0"))
        # 14c: the two TPEs under the same pruning and the same random start (the target);
        # then tfimg's TPE under its default early stopping, for what it trades (no target).
        for ours, how, target in ((tpe_sh, "early stop as Optuna's pruner (grace 1, reduction 3, cutoff rank)", ">= 1.0"),
                                  (tpe, "default early stop", None)):
            rows.append(pair(job, f"14c. median best `val_accuracy`, {title}: tfimg TPE + {how} vs Optuna "
                                  f"TPESampler + SuccessiveHalvingPruner ({TPE_COUNT} trials, {TPE_STARTUP} random first, "
                                  "same 2 slots; higher is better)",
                             ours, optuna, "best", "", target, spec=".4f", higher=True))
            rows.append(pair(job, f"14c. median trial-epochs, {title}: tfimg TPE + {how} vs Optuna "
                                  f"TPESampler + SuccessiveHalvingPruner ({TPE_COUNT} trials, {TPE_STARTUP} random first, "
                                  "same 2 slots)",
                             ours, optuna, "trial_epochs", "epochs", target and "<= 1.0"))
        rows.append(pair(job, f"14d. per-trial start cost (a trial's start to its first epoch's report, median), {title}: "
                              "tfimg TPE + default early stop (journal's `trial_started`) vs Optuna (trial function entered)",
                         tpe, optuna, "start_cost_s", "s", None, spec=".1f"))
    return [row for row in rows if row]


def write_markdown(figures):
    lines = [
        "# Row 14: sweeps that learn (bench/search_row.py)",
        "",
        f"Seeds {SEEDS}; {SLOTS} trials at a time on this machine's CPU (one core each); image `{IMAGE}`"
        + (f" ({VERSIONS[0]})" if VERSIONS else "") + ".",
        "Per seed: time from launching the command until a trial ends all its epochs within 0.5 pp of the full grid's "
        "best at that seed; trial-epochs run in all; best final `val_accuracy`; wall time of the last epoch; the "
        "per-trial start cost (a trial's start to its first epoch's report, median over its trials: tfimg from the "
        "journal's `trial_started`, after its container started; Ray Tune and Optuna from entering the trial function).",
        "The default early stopping: " + "; ".join(f"{job}: `{early_stop(job).strip()}`" for job in figures) + ".",
    ]
    if any(figure.get("recorded") for runs in figures.values() for figure in runs.get("tfimg full grid", [])):
        lines.append("`tfimg full grid` was not run again: its figures are its recording's (bench/search/curves, "
                     "`python3 bench/search_row.py --curves`), the same sweep at the same seeds.")
    fmt = lambda value, spec, unit="": "not reached" if value is None else format(value, spec) + unit
    for job, contenders in figures.items():
        lines += ["", f"## {job} ({JOBS[job]['script']}, {JOBS[job]['epochs']} epochs)", "",
                  "| contender | seed | grid's best | to within 0.5 pp | trial-epochs | best | last epoch at | start cost |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, runs in contenders.items():
            for figure in runs:
                lines.append(f"| {name} | {figure['seed']} | {fmt(figure['reference'], '.4f')} | {fmt(figure['to_best_s'], '.0f', ' s')} | "
                             f"{figure['trial_epochs']} | {fmt(figure['best'], '.4f')} | {fmt(figure['wall_s'], '.0f', ' s')} | "
                             f"{fmt(figure['start_cost_s'], '.1f', ' s')} |")
        lines += ["", "Medians over the seeds:", "",
                  "| contender | to within 0.5 pp | trial-epochs | best | start cost |", "| --- | --- | --- | --- | --- |"]
        for name, runs in contenders.items():
            to_best, epochs, best, cost = (median_of(runs, key) for key in ("to_best_s", "trial_epochs", "best", "start_cost_s"))
            reached = sum(figure["to_best_s"] is not None for figure in runs)
            lines.append(f"| {name} | {fmt(to_best and to_best['median'], '.0f', ' s')} ({reached} of {len(runs)} seeds reached it; median of those) | "
                         f"{fmt(epochs and epochs['median'], '.0f')} | {fmt(best and best['median'], '.4f')} | "
                         f"{fmt(cost and cost['median'], '.1f', ' s')} |")
    (Path(__file__).resolve().parent / "search.md").write_text("\n".join(lines) + "\n")


def curves(jobs):
    """Runs the full grids of `jobs` at SEEDS and writes bench/search/curves/JOB-SEED.json."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import CA, TFIMG, sh
    CURVES.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tfimg-curves-"))
    try:
        for job in jobs:
            for seed in SEEDS:
                for attempt in range(3):  # a trial killed from outside (exit 137) is run again, the whole grid
                    place = place_of(work, f"grid-{job}-{seed}")
                    began = time.time()
                    try:
                        _, _, costs, (swept, trials) = tfimg_side("grid")(place, job, seed, sh, TFIMG)
                        break
                    except SystemExit as failed:
                        print(f"{job} seed {seed}: the grid failed, again ({str(failed)[-300:]})", flush=True)
                        shutil.rmtree(place, ignore_errors=True)
                else:
                    raise SystemExit(f"{job} seed {seed}: the grid failed three times")
                write_curves(job, seed, swept, trials)
                print(f"{job} seed {seed}: {len(trials)} trials in {time.time() - began:.0f} s, "
                      f"start cost median {statistics.median(costs):.2f} s", flush=True)
                shutil.rmtree(place, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_curves(job, seed, swept, trials):
    """One compact file: times in seconds since the sweep started; `launch`: from the
    slot being free (the journal's previous start or end, or the sweep's start) to the
    trial's `trial_started`."""
    rel = lambda at: None if at is None else round(at - swept, 3)
    marks = sorted([swept] + [t["started"] for t in trials if "started" in t] + [t["finished"] for t in trials if "finished" in t])
    lines = []
    for trial in trials:
        before = max(mark for mark in marks if mark < trial["started"])
        entry = {"id": trial["id"], "params": trial["params"], "launch": round(trial["started"] - before, 3),
                 "created": rel(trial.get("created")), "container_started": rel(trial.get("container_started")),
                 "started": rel(trial["started"]), "finished": rel(trial.get("finished")),
                 "curve": [[epoch, round(value, 5), rel(wall)] for epoch, value, wall in trial["curve"]]}
        lines.append(json.dumps(entry, separators=(",", ":")))
    head = json.dumps({"job": job, "seed": seed, "metric": "val_accuracy", "max_epochs": JOBS[job]["epochs"],
                       "slots": SLOTS, "image": IMAGE}, separators=(",", ":"))[:-1]
    text = head + ',"trials":[\n' + ",\n".join(lines) + "\n]}\n"
    (CURVES / f"{job}-{seed}.json").write_text(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--curves"]:
        curves(sys.argv[2].split(",") if len(sys.argv) > 2 else JOB_NAMES)
    else:
        raise SystemExit(__doc__)
