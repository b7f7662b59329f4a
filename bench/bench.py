#!/usr/bin/env python3
"""tfimg against the tools a user would use instead, measured in one run on this machine.

Each row alternates the two commands (tfimg, then the alternative, then tfimg, ...),
after one warm-up of each, and reports the median of the runs with min and max, and the
ratio tfimg / alternative (lower is better). Prints a table and writes bench/results.md.
Everything a row creates carries the label io.tfimg.bench and is removed at the end.

Usage: bench/bench.py [--runs N] [--only ROW,...]   (rows 1-14; 6 is split into 6 = packing
throughput and 8 = peak RSS during a 1 GiB build; run via `just bench`). Rows 10-12 are in
bench/build_rows.py, row 13 (the model server) in bench/serving_row.py, row 14 (sweeps that learn, against Ray
Tune and Optuna; two jobs, five seeds, well over an hour) in bench/search_row.py, what rows share
in bench/common.py.

Rows 10 and 11 are cold builds (every layer rebuilt, every wheel downloaded again; the base
image stays): one run each, no warm-up, whatever `--runs` says. Row 12 removes the six
built-ins' images, builds them again one after another (each variant after the first of
its family takes the shared layers from the cache) and measures the disk their layers
take. Run row 12 before rows 10 and 11 (`--only 12,10,11`): a `--no-cache` build leaves
its image on a chain of its own. A run of
some rows keeps the other rows of bench/results.json and rewrites both results files.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build_rows import cold_build, row_disk
from common import CA, LABEL, ROOT, TFIMG, free_port, measure, remove_containers, sh, timed, wait_http

def write_spec(folder, name, extra=""):
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    (images / f"{name}.yaml").write_text(f"name: {name}\nextends: cpu-headless\n{extra}")


def row_noop_rebuild(work, runs):
    write_spec(work, "tfbench-noop")
    sh(TFIMG, "build", "tfbench-noop", "--ca-cert", CA, "--progress", "plain", cwd=work)
    context = work / "noop-context"
    sh(TFIMG, "render", "tfbench-noop", "-o", str(context), "--ca-cert", CA, cwd=work)
    sh("docker", "build", "-q", "-t", "tfbench/noop:docker", str(context))
    return measure(
        "1. no-op rebuild (tfimg build vs docker build, fully cached)",
        lambda i: sh(TFIMG, "build", "tfbench-noop", "--ca-cert", CA, cwd=work),
        lambda i: sh("docker", "build", "-q", "-t", "tfbench/noop:docker", str(context)),
        runs, target="<= 0.2",
    )


def row_pip_change(work, runs):
    # A requirement text unique to every run forces both tools to rebuild the pip layer.
    def spec(i, side):
        write_spec(work, "tfbench-pip", f'packages:\n  pip: ["six>=1.0,!=0.0.{i}{1 if side == "tfimg" else 2}{int(time.time())}"]\n')
    def ours(i):
        sh(TFIMG, "build", "tfbench-pip", "--ca-cert", CA, "--no-verify", cwd=work)
    def theirs(i):
        context = work / "pip-context"
        shutil.rmtree(context, ignore_errors=True)
        sh(TFIMG, "render", "tfbench-pip", "-o", str(context), "--ca-cert", CA, cwd=work)
        # Rendering is not timed for docker: only its build is. tfimg's detached clean-up
        # of its superseded build must not delete images under docker's cache lookup
        # (the daemon then fails the build with "unable to find image").
        wait_for_prune()
        start = time.perf_counter()
        sh("docker", "build", "-q", "-t", "tfbench/pip:docker", str(context))
        return time.perf_counter() - start
    samples = {"tfimg": [], "alternative": []}
    for index in range(runs + 1):
        spec(index, "tfimg")
        a = timed(lambda: ours(index))
        spec(index, "alternative")
        b = theirs(index)
        if index > 0:
            samples["tfimg"].append(a)
            samples["alternative"].append(b)
    row = {"name": "2. rebuild after one pip change (tfimg build --no-verify vs docker build)", "unit": "s", "target": "<= 1.0"}
    for side, values in samples.items():
        row[side] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    row["ratio"] = row["tfimg"]["median"] / row["alternative"]["median"]
    print(f"  {row['name']}: ratio {row['ratio']:.2f}", file=sys.stderr)
    return row


def same_container_as_tfimg():
    """The docker flags for the container tfimg makes: the invoking user's ids through the
    image's entrypoint, TensorBoard's port published too, a 2g /dev/shm, Docker's default
    capabilities minus those tfimg drops, and no new privileges."""
    dropped = ["AUDIT_WRITE", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETPCAP", "SYS_CHROOT"]
    flags = ["--user", "root", "-e", f"TFIMG_UID={os.getuid()}", "-e", f"TFIMG_GID={os.getgid()}",
             "-p", f"127.0.0.1:{free_port()}:6006", "--shm-size", "2g", "--security-opt", "no-new-privileges"]
    for capability in dropped:
        flags += ["--cap-drop", capability]
    return flags


def wait_for_prune():
    while subprocess.run(["pgrep", "-f", "tfimg prune-superseded"], capture_output=True).returncode == 0:
        time.sleep(0.05)


def row_detached_launch(work, runs):
    mount = work / "code"
    mount.mkdir(exist_ok=True)
    image = sh(TFIMG, "build", "cpu-headless", "--ca-cert", CA, cwd=work).stdout.strip()
    port = free_port()
    return measure(
        "3. detached headless launch with a mount and a port (tfimg run -d vs docker run -d)",
        lambda i: sh(TFIMG, "run", "cpu-headless", "-d", "--no-build", "--ca-cert", CA, "--name", f"tfbench-run-{i}",
                     "--mount", "./code", "-p", f"{port}:{port}", "--", "sleep", "300", cwd=work),
        lambda i: sh("docker", "run", "-d", "--name", f"tfbench-docker-{i}", "--label", LABEL, *same_container_as_tfimg(),
                     "-v", f"{mount}:/tf/code", "-p", f"127.0.0.1:{port}:{port}", image, "sleep", "300"),
        runs, cleanup=remove_containers, target="<= 1.0",
    )


def row_jupyter(work, runs):
    image = sh(TFIMG, "build", "cpu-jupyter", "--ca-cert", CA, cwd=work).stdout.strip()
    def docker_jupyter(i):
        port = free_port()
        token = "0123456789abcdef0123456789abcdef"
        sh("docker", "run", "-d", "--name", f"tfbench-jupyter-{i}", "--label", LABEL, *same_container_as_tfimg(),
           "-e", f"TFIMG_JUPYTER_TOKEN={token}", "-p", f"127.0.0.1:{port}:8888", image)
        wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
    return measure(
        "4. time to a usable Jupyter (tfimg run -d, waits for 200, vs docker run -d + polling every 100 ms)",
        lambda i: sh(TFIMG, "run", "cpu-jupyter", "-d", "--no-build", "--ca-cert", CA, "--name", f"tfbench-lab-{i}", cwd=work),
        docker_jupyter,
        runs, cleanup=remove_containers, target="<= 1.0",
    )


def row_ps(work, runs):
    for index in range(50):
        sh(TFIMG, "run", "cpu-headless", "--no-start", "--no-build", "--ca-cert", CA, "--name", f"tfbench-ps-{index}", cwd=work)
    try:
        return measure(
            "7. listing 50 tfimg containers (tfimg ps vs docker ps --filter label=io.tfimg.spec)",
            lambda i: sh(TFIMG, "ps"),
            lambda i: sh("docker", "ps", "-a", "--filter", "label=io.tfimg.spec"),
            runs, target="<= 1.0",
        )
    finally:
        remove_containers()


def row_team(work, runs):
    team = work / "team"
    team.mkdir(exist_ok=True)
    members = "".join(f"  - name: m{index}\n" for index in range(8))
    (team / "team.yaml").write_text(
        "team: tfbench\ndefaults:\n  spec: cpu-headless\nmembers:\n" + members.replace(
            "\n", "\n    command: [\"sleep\", \"600\"]\n", 8)
    )
    sh(TFIMG, "compose", "team.yaml", "-o", "team.compose.yaml", "--ca-cert", CA, cwd=team)
    def down():
        sh(TFIMG, "down", "team.yaml", cwd=team, check=False)
        sh("docker-compose", "-f", "team.compose.yaml", "-p", "tfbenchcompose", "down", "--timeout", "1", cwd=team, check=False)
    return measure(
        "5. a team of 8 (tfimg up vs docker-compose up -d of the exported file)",
        lambda i: sh(TFIMG, "up", "team.yaml", "--ca-cert", CA, cwd=team),
        lambda i: sh("docker-compose", "-f", "team.compose.yaml", "-p", "tfbenchcompose", "up", "-d", cwd=team),
        runs, cleanup=down, target="<= 0.6",
    )


DATA = Path(os.environ.get("TFIMG_BENCH_DATA", "/var/tmp/tfimg-bench-data"))


def bench_data():
    """1 GiB of mixed files: 96 of 8 MiB and 16384 of 16 KiB (made once, kept)."""
    marker = DATA / ".complete"
    if marker.exists():
        return DATA
    shutil.rmtree(DATA, ignore_errors=True)
    (DATA / "large").mkdir(parents=True)
    for index in range(96):
        (DATA / "large" / f"shard-{index:03}.bin").write_bytes(os.urandom(8 << 20))
    for folder in range(64):
        target = DATA / "small" / f"{folder:02}"
        target.mkdir(parents=True)
        for index in range(256):
            (target / f"sample-{index:03}.txt").write_bytes(os.urandom(16 << 10))
    marker.write_text("ok\n")
    return DATA


def row_context(work, runs):
    data = bench_data()
    total = sum(path.stat().st_size for path in data.rglob("*") if path.is_file())
    context_bench = sorted((ROOT / "target" / "release" / "deps").glob("context-*"))
    binary = next(str(path) for path in context_bench if os.access(path, os.X_OK) and path.suffix == "")
    def ours(i):
        output = sh(binary, str(data)).stdout
        return json.loads(output)["mb_per_s"]
    def theirs(i):
        start = time.perf_counter()
        # Piped, because GNU tar skips reading files when the archive is /dev/null itself.
        sh("sh", "-c", f"tar -c -C '{data}' . | cat > /dev/null")
        return total / 1e6 / (time.perf_counter() - start)
    row = measure(
        "6a. packing a 1 GiB build context (tfimg's tar stream vs tar -c), throughput",
        ours, theirs, runs, unit="MB/s", target=">= 1.0",
    )
    return row


def row_rss(work, runs):
    data = bench_data()
    spec_folder = work / "images"
    spec_folder.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(data, spec_folder)
    (spec_folder / "tfbench-big.yaml").write_text(
        f"name: tfbench-big\nextends: cpu-headless\nfiles:\n  - src: {relative}\n    dst: /data\n"
    )
    peaks = []
    for _ in range(max(1, min(runs, 2))):
        # From the data's parent folder: tfimg copies `files:` only from inside the spec's
        # folder or the current one.
        process = subprocess.Popen([TFIMG, "build", str(spec_folder / "tfbench-big.yaml"), "--no-verify", "--no-cache",
                                    "--ca-cert", CA, "--progress", "plain"],
                                   cwd=data.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        if status != 0:
            raise SystemExit("the 1 GiB build failed")
        peaks.append(usage.ru_maxrss / 1024)
    for ref in sh("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "tfimg/tfbench-big").stdout.split():
        sh("docker", "rmi", "-f", ref, check=False)
    peak = max(peaks)
    print(f"  6b. peak RSS of tfimg building with the 1 GiB context: {peak:.1f} MiB", file=sys.stderr)
    return {"name": "6b. tfimg's peak RSS during a build with the 1 GiB context", "unit": "MiB", "target": "<= 64",
            "tfimg": {"median": statistics.median(peaks), "min": min(peaks), "max": max(peaks)},
            "alternative": None, "ratio": peak}


def row_sweep(work, runs):
    """27 one-second trials, 3 at a time: tfimg sweep vs xargs -P 3 of docker run --rm."""
    folder = work / "sweep"
    folder.mkdir(exist_ok=True)
    (folder / "sweep.yaml").write_text(
        "sweep: tfbench-sweep\nimage: tfimg/cpu-headless:2.9.3\n"
        "command: [sh, -c, \"sleep 1; echo acc={n}\"]\n"
        "params: {n: [" + ", ".join(str(n) for n in range(1, 28)) + "]}\n"
        "max_parallel: 3\nobjective: {metric: acc, mode: max}\n"
    )
    # What a user writes instead: a folder and a log per trial, three in flight.
    loop = (
        "seq 27 | xargs -P 3 -I N sh -c 'mkdir -p out/N && "
        "docker run --rm --label " + LABEL + " -u \"$(id -u):$(id -g)\" -v \"$PWD/out/N:/tfimg/trial\" "
        "tfimg/cpu-headless:2.9.3 sh -c \"sleep 1; echo acc=N\" > out/N/stdout.log 2> out/N/stderr.log'"
    )

    def fresh(index, side):
        shutil.rmtree(folder / "runs", ignore_errors=True)
        shutil.rmtree(folder / "out", ignore_errors=True)

    return measure(
        "9. a sweep of 27 one-second trials, 3 at once (tfimg sweep vs xargs -P 3 of docker run --rm)",
        lambda i: sh(TFIMG, "sweep", "sweep.yaml", cwd=folder),
        lambda i: sh("sh", "-c", loop, cwd=folder),
        runs, prepare=fresh, target="<= 1.0",
    )


def row_serving(work, runs):
    import serving_row  # bench/serving_row.py: rows 13a and 13b
    return serving_row.row(work, runs, sh=sh, tfimg=TFIMG, ca=CA, label=LABEL)


def row_search(work, runs):
    import search_row  # bench/search_row.py: rows 14a-14d
    return search_row.row(work, runs, sh=sh, tfimg=TFIMG, ca=CA)


ROWS = {1: row_noop_rebuild, 2: row_pip_change, 3: row_detached_launch, 4: row_jupyter, 5: row_team, 6: row_context, 7: row_ps, 8: row_rss, 9: row_sweep,
        10: cold_build(10, "cpu-jupyter"), 11: cold_build(11, "gpu-jupyter"), 12: row_disk, 13: row_serving,
        14: row_search}


def row_number(row):
    """The row's number, from its name (`6a. packing ...` is 6)."""
    return int("".join(ch for ch in row_id(row) if ch.isdigit()))


def row_id(row):
    """The row's id, from its name: `6a`, `14b`, `3`."""
    return row["name"].split(".")[0].strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    wanted = [int(n) for n in args.only.split(",") if n] or sorted(ROWS)
    work = Path(tempfile.mkdtemp(prefix="tfimg-bench-"))
    env_note = {
        "machine": f"{platform.node()} · {os.cpu_count()} cores · {platform.machine()}",
        "docker": sh("docker", "version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})").stdout.strip(),
        "tfimg": sh(TFIMG, "--version").stdout.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    rows = []
    results = ROOT / "bench" / "results.json"
    kept = []
    if results.exists():
        earlier = json.loads(results.read_text())
        kept = [dict(row, date=row.get("date", earlier["environment"]["date"])) for row in earlier["rows"]]
    try:
        for number in wanted:
            print(f"row {number}...", file=sys.stderr)
            measured = ROWS[number](work, args.runs)
            rows.extend(measured if isinstance(measured, list) else [measured])
    finally:
        remove_containers()
        sh("docker", "image", "rm", "-f", "tfbench/noop:docker", "tfbench/pip:docker", check=False)
        for name in ("tfbench-noop", "tfbench-pip", "tfbench-big", "tfbench-search"):
            for ref in sh("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", f"tfimg/{name}").stdout.split():
                sh("docker", "rmi", "-f", ref, check=False)
            # docker build's superseded (dangling) images of the same Dockerfiles.
            for image in set(sh("docker", "images", "-q", "--filter", f"label=io.tfimg.spec={name}").stdout.split()):
                sh("docker", "rmi", "-f", image, check=False)
        shutil.rmtree(work, ignore_errors=True)
    for row in rows:
        row["date"] = env_note["date"]
    # A row is kept from an earlier run unless this run measured its id (`14b`, `6a`, `3`):
    # a run of some of a row's contenders keeps the parts it did not measure.
    measured = {row_id(row) for row in rows}
    kept = [row for row in kept if row_id(row) not in measured]
    rows = sorted(kept + rows, key=lambda row: (row_number(row), row["name"]))
    lines = [
        "# tfimg benchmarks",
        "",
        f"Machine: {env_note['machine']}; Docker {env_note['docker']}; {env_note['tfimg']}; {env_note['date']}.",
        f"Median of {args.runs} alternating runs after a warm-up (min–max in brackets); ratio = tfimg / alternative.",
        "Rows 10 and 11 are one cold build each; row 12 is one measurement. Rows not measured in this run keep their figures from the last run that measured them (`--only`).",
        "",
        "| row | tfimg | alternative | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        target = row["target"] or "-"
        limit = row.get("limit") or (float(target.split()[-1]) if row["target"] else None)
        met = limit is None or (row["ratio"] <= limit if target.startswith("<=") else row["ratio"] >= limit)
        met = row.get("met", met)  # a row whose target asks more than its ratio (14a)
        def cell(side):
            values = row[side]
            if values is None:
                return "-"
            if "cells" in row:
                return row["cells"][side]
            return f"{values['median']:.3f} {row['unit']} [{values['min']:.3f}–{values['max']:.3f}]"
        ratio = row.get("ratio_text") or (f"{row['ratio']:.1f} MiB" if row["alternative"] is None else f"{row['ratio']:.2f}")
        if limit is None:
            verdict = "-"
        elif met:
            verdict = "yes"
        elif "met" in row and (row["ratio"] <= limit if target.startswith("<=") else row["ratio"] >= limit):
            verdict = "no: " + row["ratio_text"]
        elif target.startswith("<="):
            verdict = f"no: {100 * (row['ratio'] / limit - 1):.0f}% over"
        else:
            verdict = f"no: {100 * (1 - row['ratio'] / limit):.0f}% under"
        lines.append(f"| {row['name']} | {cell('tfimg')} | {cell('alternative')} | {ratio} | {target} | {verdict} |")
    earlier = [row for row in rows if row.get("date") != env_note["date"]]
    if earlier:
        lines.append("")
        lines.append("Kept from earlier runs: " + "; ".join(
            f"{row['name'].split(' ')[0].rstrip('.')} ({row['date']})" for row in earlier) + ".")
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "bench" / "results.md").write_text(text)
    (ROOT / "bench" / "results.json").write_text(json.dumps({"environment": env_note, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
