"""What every row of `just bench` shares: the binaries, the commands, the measuring loop."""
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TFIMG = os.environ.get("TFIMG_BENCH_BIN", str(ROOT / "target" / "release" / "tfimg"))
CA = os.environ.get("TFIMG_BENCH_CA", "/etc/ssl/certs/ca-certificates.crt")
LABEL = "io.tfimg.bench=1"


def sh(*args, check=True, capture=True, env=None, cwd=None):
    result = subprocess.run(
        list(args), check=False, text=True, env=env, cwd=cwd,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.PIPE if capture else subprocess.DEVNULL,
    )
    if check and result.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{result.stdout}\n{result.stderr}")
    return result


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(url, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} never answered")


def remove_containers():
    ids = sh("docker", "ps", "-aq", "--filter", "label=" + LABEL).stdout.split()
    ids += sh("docker", "ps", "-aq", "--filter", "name=^tfbench").stdout.split()
    if ids:
        sh("docker", "rm", "-f", *sorted(set(ids)), check=False)


def measure(name, ours, theirs, runs, prepare=None, cleanup=None, unit="s", target=None, warm_up=True):
    """Alternates ours/theirs; `prepare(i)` before each run, `cleanup()` after each."""
    samples = {"tfimg": [], "alternative": []}
    first = 1 if warm_up else 0
    for index in range(first, runs + 1):
        for side, action in (("tfimg", ours), ("alternative", theirs)):
            if prepare:
                prepare(index, side)
            value = action(index) if unit != "s" else timed(lambda: action(index))
            if cleanup:
                cleanup()
            if index > 0:  # round 0 is the warm-up
                samples[side].append(value)
    row = {"name": name, "unit": unit, "target": target}
    for side, values in samples.items():
        row[side] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    if unit == "MB/s":
        row["ratio"] = row["tfimg"]["median"] / row["alternative"]["median"]  # higher is better
    else:
        row["ratio"] = row["tfimg"]["median"] / row["alternative"]["median"]
    print(f"  {name}: tfimg {row['tfimg']['median']:.3f} {unit}, alternative {row['alternative']['median']:.3f} {unit}, ratio {row['ratio']:.2f}", file=sys.stderr)
    return row
