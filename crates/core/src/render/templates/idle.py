# tfimg's idle watch, generated from spec `@NAME@`: edit the spec, not this file.
#
# `idle: {containers: 12h}` in a team file, `tfimg run --idle-containers 12h`: the
# entrypoint starts the service under this watch, which lets the container go when nobody
# has used it for that long. Used means any of:
#   - a process besides the service itself (and what the entrypoint started beside it,
#     TensorBoard): a Jupyter kernel or terminal, an SSH session, a `tfimg exec` session,
#     work left running in tmux or under nohup;
#   - a process of the container with a GPU open;
#   - Jupyter's own last activity (its API, kernels and terminals; a browser tab in view
#     polls it, a hidden one does not).
# Idle that long, it says so in the container's output, stops the service and exits 0:
# Docker's `on-failure` restart policy leaves it stopped, with its data, until `tfimg up`
# starts it again. Stopped from outside (`docker stop`, the daemon going down with the
# machine), it exits as a signal would (128 + the signal), so the policy restarts it with
# the daemon as before. Otherwise the service's own exit code is the container's.
#
# Usage: idle.py SECONDS -- COMMAND...
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from datetime import datetime

SERVICE = "@SERVICE@"
JUPYTER_PORT = "@JUPYTER_PORT@"
# How the container's output ends when it lets go; `tfimg ps` and `tfimg up` look for it.
STOPPED = "@IDLE_STOPPED@"
# When it was last used, in whole seconds since the Unix epoch, rewritten at each look:
# `tfimg ps --gpus` shows how long it has been idle from it.
LAST_USED = "@IDLE_LAST_USED@"


def say(text):
    print("tfimg: " + text, file=sys.stderr, flush=True)


def duration(seconds):
    """12h, 1d 6h, 90s as 1m 30s."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append("%d%s" % (seconds // size, unit))
            seconds %= size
    return " ".join(parts) or "0s"


def stat(pid):
    """(state, parent pid) of a process, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as file:
            text = file.read().decode("ascii", "replace")
    except OSError:
        return None
    # The name (field 2) may hold spaces and parentheses: the fields after it follow the
    # last `)`.
    fields = text[text.rfind(")") + 2:].split()
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    return fields[0], int(fields[1])


def holds_a_gpu(pid):
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for name in names:
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, name))
        except OSError:
            continue
        if target.startswith("/dev/nvidia") and target[len("/dev/nvidia"):].isdigit():
            return True
    return False


def used_by_processes(me, service):
    """Whether a process of the container is someone's work (see the top of this file)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            facts = stat(int(entry))
            if facts is not None and facts[0] not in ("Z", "X"):
                parents[int(entry)] = facts[1]
    for pid in parents:
        if holds_a_gpu(pid):
            return True
        if own(pid, parents, me, service):
            continue
        return True
    return False


def own(pid, parents, me, service):
    """Whether a process is the container's own rather than someone's work: tini (PID 1),
    this watch, the service itself, and what the entrypoint started beside the service
    (TensorBoard and its helpers: this watch's descendants, not the service's). The
    service's descendants (kernels, terminals, SSH sessions) and every process outside
    this watch's tree (`docker exec` sessions, work left behind under tini) are work."""
    if pid in (1, me, service):
        return True
    seen = set()
    while pid in parents and pid not in seen:
        seen.add(pid)
        pid = parents[pid]
        if pid == service:
            return False
        if pid == me:
            return True
    return False


def jupyter_last_activity():
    """Seconds since Jupyter's last activity, or None when it cannot tell."""
    token = os.environ.get("TFIMG_JUPYTER_TOKEN", "")
    if SERVICE != "jupyter" or not JUPYTER_PORT or not token:
        return None
    base = os.environ.get("TFIMG_JUPYTER_BASE_URL", "/")
    if not base.endswith("/"):
        base += "/"
    # /api/status is the one API call Jupyter does not count as activity.
    request = urllib.request.Request(
        "http://127.0.0.1:%s%sapi/status" % (JUPYTER_PORT, base),
        headers={"Authorization": "token " + token},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            status = json.loads(response.read(65536).decode("utf-8"))
        text = status["last_activity"].replace("Z", "+00:00")
        return max(0.0, time.time() - datetime.fromisoformat(text).timestamp())
    except Exception:  # starting, stopping, or an older server: processes still count
        return None


def keep_last_used(seconds_ago):
    try:
        with open(LAST_USED + ".new", "w") as file:
            file.write("%d\n" % int(time.time() - seconds_ago))
        os.replace(LAST_USED + ".new", LAST_USED)
    except OSError:
        pass


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--" or not sys.argv[1].isdigit():
        say("usage: idle.py SECONDS -- COMMAND...")
        return 64
    limit = int(sys.argv[1])
    if limit < 1:
        say("TFIMG_IDLE_CONTAINERS must be whole seconds, 1 or more, got %r" % sys.argv[1])
        return 64
    every = max(1, min(60, limit // 4))
    child = subprocess.Popen(sys.argv[3:])
    stopped_by = []

    # tini sends `docker stop`'s signal to the whole process group: the service has it
    # already, so this only remembers it and goes on waiting for the service to end.
    def remember(number, _frame):
        stopped_by.append(number)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, remember)

    me = os.getpid()
    last_used = time.monotonic()
    keep_last_used(0)
    while True:
        try:
            code = child.wait(timeout=every)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            if stopped_by:
                return 128 + stopped_by[0]
            return code if code >= 0 else 128 - code
        now = time.monotonic()
        if stopped_by or used_by_processes(me, child.pid):
            last_used = now
        since = jupyter_last_activity()
        if since is not None:
            last_used = max(last_used, now - since)
        keep_last_used(now - last_used)
        if now - last_used >= limit:
            break
    idle = duration(limit)
    say(
        "nobody used this container for %s (no kernel, terminal, SSH or exec session, no "
        "process left running, no GPU in use): stopping it" % idle
    )
    child.terminate()
    try:
        child.wait(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    # The last line of its output: the one `tfimg ps` reads.
    print(
        "%s %s: stopped, with its data; a team's `tfimg up` starts it again" % (STOPPED, idle),
        file=sys.stderr,
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
