"""`just bench`'s row 14: sweeps that learn, side by side on this machine's CPU slots.

The job: bench/search/train.py, a small Keras CNN on a synthetic image set, 9 epochs,
`val_accuracy` after each, one core per trial. The space: the seed sweep's grid, lr
{1e-3, 5e-4, 1e-4} × wd {1e-4, 5e-5, 1e-5} × aug {low, medium, high} (27
configurations; lr 1e-4 and augmentation that does not fit the data are clear losers),
its numbers listed in ascending order as a user would (so the best is not the first trial).
Every contender runs in the same image (`tfbench-search`: tf218-cpu-headless with
`ray[tune]` and `optuna`, the newest that install in its Python), with SLOTS trials at
a time:

- tfimg full grid (`params:`), the baseline, whose best final value is the reference;
- tfimg grid + ASHA (`early_stop: {rule: asha, max_epochs: 9, grace: 1, reduction: 3}`);
- tfimg TPE + ASHA (`tpe:` over the same values, TPE_COUNT trials, default startup);
- Ray Tune: the grid under `ASHAScheduler` with the same settings (search/ray_tune.py);
- Optuna: TPE_COUNT trials, `TPESampler` + `SuccessiveHalvingPruner` (search/optuna_run.py).

For each, per seed (SEEDS: the training seed and every searcher's): the wall time from
launching the command until a trial ends its 9 epochs within 0.5 percentage points of
the full grid's best at that seed, the trial-epochs run in all, and the best final value
reached. Medians over the seeds go to bench/results.json (rows 14a-14c, with their
targets) and every figure to bench/search.md.
"""
import json
import os
import shutil
import statistics
import time
from pathlib import Path

SEEDS = [int(seed) for seed in os.environ.get("TFIMG_BENCH_SEARCH_SEEDS", "1,2,3").split(",")]
SLOTS = 2
TPE_COUNT = 15
WITHIN = 0.005
IMAGE = "tfimg/tfbench-search:2.18.1"
CODE = Path(__file__).resolve().parent / "search"
# Numbers in ascending order, as a user lists them, so the grid's best is not its first
# trial; the axes in the order Ray Tune expands its `grid_search` (by name, the first
# varying fastest: aug, then lr, then wd), so both grids run the same trials in the
# same order.
GRID = "wd: [1e-5, 5e-5, 1e-4]\n  lr: [1e-4, 5e-4, 1e-3]\n  aug: [low, medium, high]"
CHOICES = "lr: {choice: [1e-4, 5e-4, 1e-3]}, wd: {choice: [1e-5, 5e-5, 1e-4]}, aug: {choice: [low, medium, high]}"
ASHA = "early_stop: {rule: asha, max_epochs: 9, grace: 1, reduction: 3}\n"


def sweep_text(name, search, seed, early):
    return (
        f"sweep: {name}\nimage: {IMAGE}\n"
        "command: [python, /bench/train.py, --lr, \"{lr}\", --wd, \"{wd}\", --aug, \"{aug}\"]\n"
        "mounts: [\"./code:/bench:ro\"]\n"
        f"env: {{BENCH_SEED: \"{seed}\"}}\n"
        f"{search}\nmax_parallel: {SLOTS}\nobjective: {{metric: val_accuracy, mode: max}}\n"
        f"{early}"
    )


def tfimg_side(kind):
    """A tfimg contender: runs its sweep, returns (t0, epochs)."""
    def run(folder, seed, sh, tfimg):
        name = f"tfbench-{kind}-{seed}"
        search = {
            "grid": f"params:\n  {GRID}",
            "grid-asha": f"params:\n  {GRID}",
            "tpe-asha": f"tpe: {{count: {TPE_COUNT}, seed: {seed}, {CHOICES}}}",
        }[kind]
        early = ASHA if kind.endswith("asha") else ""
        (folder / "sweep.yaml").write_text(sweep_text(name, search, seed, early))
        start = time.time()
        sh(tfimg, "sweep", "sweep.yaml", cwd=folder)
        epochs = []
        for metrics in sorted((folder / "runs" / name).glob("t*/metrics.jsonl")):
            for line in metrics.read_text().splitlines():
                point = json.loads(line)
                epochs.append((metrics.parent.name, point["epoch"], point["val_accuracy"], point["wall"]))
        return start, epochs
    return run


def container_side(script, *extra):
    """A contender that runs in one container of the bench image, as its users run it."""
    def run(folder, seed, sh, tfimg):
        log_dir = folder / "log"
        log_dir.mkdir()
        os.chmod(log_dir, 0o777)
        start = time.time()
        sh("docker", "run", "--rm", "--label", "io.tfimg.bench=1", "--shm-size", "1g",
           "-e", "PYTHONPATH=/bench", "-v", f"{folder / 'code'}:/bench:ro", "-v", f"{log_dir}:/log",
           IMAGE, "python", f"/bench/{script}", "--seed", str(seed), "--log", "/log/epochs.jsonl",
           "--slots", str(SLOTS), *extra)
        epochs = []
        log = log_dir / "epochs.jsonl"
        for line in (log.read_text().splitlines() if log.exists() else []):
            point = json.loads(line)
            epochs.append((point["trial"], point["epoch"], point["val_accuracy"], point["wall"]))
        return start, epochs
    return run


CONTENDERS = [
    ("tfimg full grid", tfimg_side("grid")),
    ("tfimg grid + ASHA", tfimg_side("grid-asha")),
    ("tfimg TPE + ASHA", tfimg_side("tpe-asha")),
    ("Ray Tune grid + ASHAScheduler", container_side("ray_tune.py")),
    ("Optuna TPESampler + SuccessiveHalvingPruner", container_side("optuna_run.py", "--count", str(TPE_COUNT))),
]


def summary(start, epochs, reference):
    """What one run did: time to a trial within WITHIN of `reference`, trial-epochs, best."""
    finals = [(wall, value) for _, epoch, value, wall in epochs if epoch == 9]
    hits = [wall for wall, value in finals if reference is not None and value >= reference - WITHIN]
    return {
        "to_best_s": (min(hits) - start) if hits else None,
        "trial_epochs": len(epochs),
        "best": max((value for _, value in finals), default=None),
        "wall_s": (max(wall for *_, wall in epochs) - start) if epochs else None,
    }


def stats(values):
    values = [value for value in values if value is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def row(work, runs, sh, tfimg, ca):
    folder = work / "search"
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    (images / "tfbench-search.yaml").write_text(
        "name: tfbench-search\nextends: tf218-cpu-headless\npackages:\n  pip: [\"ray[tune]\", optuna]\n")
    sh(tfimg, "build", "tfbench-search", "--ca-cert", ca, "--progress", "plain", cwd=folder)
    figures = {name: [] for name, _ in CONTENDERS}
    for seed in SEEDS:
        reference = None
        for name, contender in CONTENDERS:
            place = folder / f"{CONTENDERS.index((name, contender))}-{seed}"
            shutil.rmtree(place, ignore_errors=True)
            place.mkdir()
            shutil.copytree(CODE, place / "code", ignore=shutil.ignore_patterns("__pycache__"))
            start, epochs = contender(place, seed, sh, tfimg)
            if reference is None:  # the full grid runs first
                reference = max(value for _, epoch, value, _ in epochs if epoch == 9)
            figure = summary(start, epochs, reference)
            figure["seed"], figure["reference"] = seed, reference
            figures[name].append(figure)
            print(f"  seed {seed} {name}: {figure}", flush=True)
            shutil.rmtree(place, ignore_errors=True)
    write_markdown(figures)
    return rows_of(figures)


def median_of(figures, name, key):
    return stats([figure[key] for figure in figures[name]])


def rows_of(figures):
    grid, asha, tpe = "tfimg full grid", "tfimg grid + ASHA", "tfimg TPE + ASHA"
    ray, optuna = "Ray Tune grid + ASHAScheduler", "Optuna TPESampler + SuccessiveHalvingPruner"

    def pair(name, ours, theirs, key, unit, target):
        mine, other = median_of(figures, ours, key), median_of(figures, theirs, key)
        reached = lambda side: sum(figure[key] is not None for figure in figures[side])
        row = {"name": name, "unit": unit, "target": target, "tfimg": mine, "alternative": other,
               "ratio": (mine["median"] / other["median"]) if mine and other else float("inf")}
        cell = lambda values, side: "-" if values is None else (
            f"{values['median']:.0f} {unit} [{values['min']:.0f}–{values['max']:.0f}]"
            + ("" if reached(side) == len(SEEDS) else f" ({reached(side)} of {len(SEEDS)} seeds reached it)"))
        row["cells"] = {"tfimg": cell(mine, ours), "alternative": cell(other, theirs)}
        return row

    return [
        pair("14a. trial-epochs of a sweep over the 27-grid of a Keras CNN: tfimg grid + ASHA vs tfimg full grid (ASHA must reach the grid's best within 0.5 pp, see bench/search.md)",
             asha, grid, "trial_epochs", "epochs", "<= 0.4"),
        pair("14b. time to a trial within 0.5 pp of the grid's best: tfimg grid + ASHA vs Ray Tune ASHAScheduler (same grid, same 2 slots)",
             asha, ray, "to_best_s", "s", "<= 1.0"),
        pair("14c. time to a trial within 0.5 pp of the grid's best: tfimg TPE + ASHA vs Optuna TPESampler + SuccessiveHalvingPruner (15 trials, same 2 slots)",
             tpe, optuna, "to_best_s", "s", "<= 1.0"),
    ]


def write_markdown(figures):
    lines = [
        "# Row 14: sweeps that learn (bench/search_row.py)",
        "",
        f"Seeds {SEEDS}; {SLOTS} trials at a time on this machine's CPU (one core each); image `{IMAGE}`.",
        "Per seed: time from launching the command until a trial ends its 9 epochs within 0.5 pp of the full grid's best at that seed; trial-epochs run in all; best final `val_accuracy`; wall time of the last epoch.",
        "",
        "| contender | seed | grid's best | to within 0.5 pp | trial-epochs | best | last epoch at |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    fmt = lambda value, spec, unit="": "not reached" if value is None else format(value, spec) + unit
    for name, runs in figures.items():
        for figure in runs:
            lines.append(f"| {name} | {figure['seed']} | {figure['reference']:.4f} | {fmt(figure['to_best_s'], '.0f', ' s')} | "
                         f"{figure['trial_epochs']} | {fmt(figure['best'], '.4f')} | {fmt(figure['wall_s'], '.0f', ' s')} |")
    lines += ["", "Medians over the seeds:", "", "| contender | to within 0.5 pp | trial-epochs | best |", "| --- | --- | --- | --- |"]
    for name in figures:
        to_best, epochs, best = (median_of(figures, name, key) for key in ("to_best_s", "trial_epochs", "best"))
        reached = sum(figure["to_best_s"] is not None for figure in figures[name])
        lines.append(f"| {name} | {fmt(to_best and to_best['median'], '.0f', ' s')} ({reached} of {len(SEEDS)} seeds reached it; median of those) | "
                     f"{fmt(epochs and epochs['median'], '.0f')} | {fmt(best and best['median'], '.4f')} |")
    (Path(__file__).resolve().parent / "search.md").write_text("\n".join(lines) + "\n")
