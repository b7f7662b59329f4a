#!/usr/bin/env python3
"""Two commits of tfimg through the same bench rows, alternating, on this machine.

`just bench` answers "is tfimg faster than what a user would use instead". This answers
"did a change make tfimg slower": it runs `bench/bench.py --only ROWS` of an earlier commit
(from its own worktree and release build) and of the working tree, alternating the order
each round (base, head; head, base; ...), and compares the tfimg side of every row.

A row counts as worse when head's median is beyond base's by more than the noise, and the
noise is the spread (max - min) of every base run of that row over all rounds. The
comparison goes to bench/commits.md; the per-round results.json files stay under the
work folder printed at the start.

Usage: bench/commits.py BASE [--rows 1,2,3,4,5,6,7,8,9] [--rounds 2] [--runs 5]
(run via `just bench-commits BASE`, which builds the working tree's release first).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, check=True, text=True, capture_output=True).stdout.strip()


def base_tree(commit):
    """A detached worktree of `commit` with its release build (kept between runs)."""
    sha = git("rev-parse", "--verify", commit + "^{commit}")
    tree = Path(os.environ.get("TFIMG_BENCH_BASE_DIR", "/var/tmp")) / f"tfimg-bench-base-{sha[:12]}"
    if not tree.exists():
        git("worktree", "add", "--detach", str(tree), sha)
    print(f"building {sha[:12]} (release) in {tree}", file=sys.stderr)
    subprocess.run(["cargo", "build", "--release", "--locked", "--bins", "--benches"], cwd=tree, check=True)
    return sha, tree


def run_bench(tree, rows, runs, keep):
    """One bench.py run of the commit in `tree`; its results.json is copied to `keep`.
    The tree's tracked results files are put back afterwards."""
    results = [tree / "bench" / name for name in ("results.json", "results.md")]
    saved = {path: path.read_bytes() for path in results if path.exists()}
    try:
        subprocess.run([sys.executable, str(tree / "bench" / "bench.py"), "--only", rows, "--runs", str(runs)],
                       cwd=tree, check=True, stdout=subprocess.DEVNULL)
        shutil.copy(tree / "bench" / "results.json", keep)
    finally:
        for path, data in saved.items():
            path.write_bytes(data)
    measured = json.loads(keep.read_text())
    wanted = {int(n) for n in rows.split(",")}
    return [row for row in measured["rows"] if row_number(row) in wanted and row.get("date") == measured["environment"]["date"]]


def row_number(row):
    return int("".join(ch for ch in row["name"].split(".")[0] if ch.isdigit()))


def higher_is_better(row):
    return row["unit"] == "MB/s"


def compare(base_runs, head_runs):
    """Per row: base and head medians (median over rounds), base's noise, the verdict."""
    names = sorted({row["name"] for run in base_runs + head_runs for row in run},
                   key=lambda name: (row_number({"name": name}), name))
    lines = []
    worse = []
    for name in names:
        def sides(runs):
            return [row["tfimg"] for run in runs for row in run if row["name"] == name and row.get("tfimg")]
        base, head = sides(base_runs), sides(head_runs)
        if not base or not head:
            continue
        unit = next(row["unit"] for run in base_runs for row in run if row["name"] == name)
        up = higher_is_better({"unit": unit})
        base_median = statistics.median(side["median"] for side in base)
        head_median = statistics.median(side["median"] for side in head)
        noise = max(side["max"] for side in base) - min(side["min"] for side in base)
        change = (head_median - base_median) * (-1 if up else 1)
        verdict = "worse" if change > noise else "same or better"
        if verdict == "worse":
            worse.append(name)
        ratio = head_median / base_median if base_median else float("nan")
        lines.append(f"| {name} | {base_median:.3f} {unit} | {head_median:.3f} {unit} | {ratio:.2f} | "
                     f"{noise:.3f} {unit} | {verdict} |")
    return lines, worse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--rows", default="1,2,3,4,5,6,7,8,9")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sha, base = base_tree(args.base)
    head = git("rev-parse", "--short=12", "HEAD") + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")
    work = Path(tempfile.mkdtemp(prefix="tfimg-bench-commits-"))
    print(f"per-round results in {work}", file=sys.stderr)
    base_runs, head_runs = [], []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        for round_number in range(args.rounds):
            order = [("base", base), ("head", ROOT)]
            if round_number % 2:
                order.reverse()
            for side, tree in order:
                print(f"round {round_number + 1}: {side}", file=sys.stderr)
                rows = run_bench(tree, args.rows, args.runs, work / f"{side}-{round_number + 1}.json")
                (base_runs if side == "base" else head_runs).append(rows)
    finally:
        if os.environ.get("TFIMG_BENCH_KEEP_BASE") != "1":
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
    lines, worse = compare(base_runs, head_runs)
    text = "\n".join([
        "# tfimg against an earlier tfimg",
        "",
        f"Base {sha[:12]}, head {head}; rows {args.rows}; {args.rounds} rounds of `bench.py --runs {args.runs}`, "
        f"alternating which commit goes first; {started}.",
        "Each figure is the median over rounds of a round's median (tfimg's side of the row). Noise is the spread "
        "(max - min) of every base run of the row; a row is worse when head is beyond base by more than that.",
        "",
        "| row | base | head | head / base | noise | verdict |",
        "| --- | --- | --- | --- | --- | --- |",
        *lines,
        "",
        f"Rows worse than the base by more than their noise: {len(worse)}" + (f" ({'; '.join(worse)})" if worse else "") + ".",
    ]) + "\n"
    print(text)
    (ROOT / "bench" / "commits.md").write_text(text)
    sys.exit(1 if worse else 0)


if __name__ == "__main__":
    main()
