#!/usr/bin/env python3
"""Where a served model's CPU goes: each thread of the serving container's processes, its
CPU seconds over one wrk run and per request answered (docs/performance.md), beside what
else the machine spent per request: wrk itself, Docker's userland proxy of the published
port (`docker-proxy`, on the path of a client on this host), and every core's busy time.

    bench/serving_cpu.py CONTAINER URL:predict BODY.json [--seconds 10] [--clients 8]

CONTAINER is what `tfimg serve -d` printed; BODY a `:predict` body. Reads /proc on the
host (run it as root, as the bench does). The front's threads are `tokio-rt-worker`; the
Python server's are all `python` (TensorFlow's pool, the event loops, the link's thread
and each signature's worker), told apart by their thread ids and their share.
"""

import argparse
import collections
import os
import subprocess
import tempfile
import time

from serving_row import WRK_SCRIPT  # wrk's request, as row 13 sends it


def threads(pids):
    """CPU seconds so far of every thread of `pids`, by `pid:tid:name`."""
    tick = os.sysconf("SC_CLK_TCK")
    found = collections.Counter()
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                    text = stat.read()
            except FileNotFoundError:
                continue
            name = text[text.index("(") + 1 : text.rindex(")")]
            fields = text[text.rindex(")") + 2 :].split()
            found[f"{pid}:{tid}:{name}"] += (int(fields[11]) + int(fields[12])) / tick
    return found


def machine_busy():
    """Seconds every core of the machine has been busy (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def proxies(url):
    """The pids of Docker's userland proxy for the url's port (none where it is off)."""
    port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
    found = subprocess.run(
        ["pgrep", "-f", f"docker-proxy .*-host-port {port} "], capture_output=True, text=True
    )
    return found.stdout.split()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("container")
    parser.add_argument("url")
    parser.add_argument("body")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    top = subprocess.run(
        ["docker", "top", args.container, "-eo", "pid"], capture_output=True, text=True, check=True
    )
    pids = [line.strip() for line in top.stdout.splitlines()[1:] if line.strip()]
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT)
        script.flush()
        env = dict(os.environ, TFIMG_BENCH_BODY=os.path.abspath(args.body))

        def wrk(seconds):
            command = ["wrk", "-d", str(seconds), "--latency", "-t", str(min(args.clients, 2))]
            command += ["-c", str(args.clients), "-s", script.name, args.url]
            return subprocess.run(command, capture_output=True, text=True, env=env, check=True)

        wrk(2)  # the warm-up
        proxy = proxies(args.url)
        before, started = threads(pids), time.monotonic()
        around = threads(proxy), machine_busy(), os.times()
        report = wrk(args.seconds).stdout
        after, took = threads(pids), time.monotonic() - started
        proxied = sum(threads(proxy).values()) - sum(around[0].values())
        busy = machine_busy() - around[1]
        ended = os.times()
        client = ended.children_user + ended.children_system
        client -= around[2].children_user + around[2].children_system
    rate = next(
        float(line.split()[-1]) for line in report.splitlines() if line.startswith("Requests/sec")
    )
    answered = rate * args.seconds
    p50 = next(line.split()[-1] for line in report.splitlines() if line.strip().startswith("50%"))
    print(f"{rate:.0f} requests/s, p50 {p50}, {args.clients} clients, {args.seconds} s")
    total = 0.0
    for key in sorted(after, key=lambda key: before.get(key, 0) - after[key]):
        spent = after[key] - before.get(key, 0)
        total += spent
        if spent >= 0.05:
            print(
                f"{key:36} {spent:6.2f} s {spent / took * 100:5.1f} % of a core "
                f"{spent / answered * 1e6:6.1f} µs a request"
            )
    print(f"all threads: {total / answered * 1e6:.1f} µs a request")
    print(f"wrk: {client / answered * 1e6:.1f} µs a request")
    if proxy:
        print(f"docker-proxy: {proxied / answered * 1e6:.1f} µs a request")
    print(f"the machine, every core busy: {busy / answered * 1e6:.1f} µs a request")


if __name__ == "__main__":
    main()
