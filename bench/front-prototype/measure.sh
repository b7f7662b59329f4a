#!/bin/bash
# The compiled-front prototype against `tfimg serve`, as docs/performance.md reports it:
# the examples' MLP served three ways from the cpu-serving image, driven by wrk from this
# machine (8 clients, batch 1 and 32), beside bench/serving_load.py's in-process ceiling;
# ROUNDS alternating rounds of SECONDS, then each server's CPU a request.
#   - python: `tfimg serve` as it is;
#   - front-merges: this crate's front (HTTP and JSON in Rust) merges the requests that
#     queued during a model call and sends them to worker.py as one batch;
#   - python-merges: the front sends each request to worker_merges.py at once, tagged,
#     and Python merges what queued.
# Needs: tfimg built (target/release/tfimg), the cpu-serving and cpu-headless images,
# wrk, and TFIMG_CA_CERT when the network inspects TLS. Removes what it starts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${ROUNDS:-3} seconds=${SECONDS_EACH:-6}
tfimg=$root/target/release/tfimg
work=$here/work
rm -rf "$work"; mkdir -p "$work/export" "$work/code"; chmod go-rwx "$work/export"
served=""
cleanup() { docker rm -f $served tfproto-front tfproto-merges >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup

# A front built for any Linux: glibc linked statically (the 2.9 line's images have glibc 2.31).
(cd "$here" && CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build -q --release --target x86_64-unknown-linux-gnu)
cp "$here/target/x86_64-unknown-linux-gnu/release/front-prototype" "$work/front"
cp "$here"/worker.py "$here"/worker_merges.py "$here"/post.lua "$work/"
cp "$root/examples/sweep/code/train.py" "$work/code/"
cat > "$work/code/save.py" <<'PY'
import sys
sys.path.insert(0, "/tf/code")
import tensorflow as tf
from train import data, model
tf.keras.utils.set_random_seed(0)
(x, y), _ = data()
net = model(1e-3, 1e-4)
net.fit(x, y, epochs=1, batch_size=64, verbose=0)
net.save("/tf/export/mlp/1")
PY
python3 - "$work" <<'PY'
import json, random, sys
for batch in (1, 32):
    rows = [[random.Random(batch * 1000 + i).gauss(0, 1) for _ in range(16)] for i in range(batch)]
    open(f"{sys.argv[1]}/batch{batch}.json", "w").write(json.dumps({"instances": rows}))
PY
cd "$work"
"$tfimg" run cpu-headless --name tfproto-train --mount ./code:ro --mount ./export -- python code/save.py >/dev/null
served=$("$tfimg" serve ./export/mlp --name mlp -d --port 18501 --grpc-port 18500 | awk '$1 == "container" {print $2}')
start() { # NAME PORT WORKER MODE
  docker run -d --name "$1" -u "$(id -u):$(id -g)" -v "$work:/w:ro" -p "127.0.0.1:$2:8501" \
    -e MODE="$4" --entrypoint sh tfimg/cpu-serving:2.9.3 -c \
    "python /w/$3 /w/export/mlp/1 /tmp/worker.sock & while [ ! -S /tmp/worker.sock ]; do sleep 0.2; done; exec /w/front 0.0.0.0:8501 /tmp/worker.sock 16" >/dev/null
}
start tfproto-front 18601 worker.py front-merges
start tfproto-merges 18602 worker_merges.py python-merges
for port in 18501 18601 18602; do
  until curl -sf -X POST "http://127.0.0.1:$port/v1/models/mlp:predict" -d @batch1.json >/dev/null; do sleep 0.5; done
done

wrk_run() { # PORT BATCH SECONDS [--latency]
  TFIMG_BENCH_BODY=batch$2.json wrk -d"$3" -t2 -c8 ${4:-} -s post.lua "http://127.0.0.1:$1/v1/models/mlp:predict"
}
uptime
for r in $(seq "$rounds"); do
  docker run --rm --user root --entrypoint python3 -v "$work/export/mlp:/models/mlp:ro" \
    -v "$root/bench:/bench:ro" tfimg/cpu-serving:2.9.3 /bench/serving_load.py \
    --model-dir /models/mlp --clients 8 --batches 1,32 --seconds "$seconds" 2>/dev/null \
    | tail -1 | sed "s/^/round $r ceiling: /"
  for batch in 1 32; do
    for side in python=18501 front-merges=18601 python-merges=18602; do
      wrk_run "${side#*=}" "$batch" 2 >/dev/null
      out=$(wrk_run "${side#*=}" "$batch" "$seconds" --latency)
      grep -q "Non-2xx" <<<"$out" && { echo "$out"; exit 1; }
      echo "round $r batch $batch ${side%=*}: p50 $(awk '/ 50%/{print $2}' <<<"$out")" \
        "p99 $(awk '/ 99%/{print $2}' <<<"$out") $(awk '/Requests\/sec/{print $2}' <<<"$out") req/s"
    done
  done
done
for batch in 1 32; do
  for side in $served=18501 tfproto-front=18601 tfproto-merges=18602; do
    id=$(docker inspect -f '{{.Id}}' "${side%=*}")
    usage=/sys/fs/cgroup/system.slice/docker-$id.scope/cpu.stat  # cgroup v2, else v1
    [ -f "$usage" ] || usage=/sys/fs/cgroup/cpuacct/docker/$id/cpuacct.usage
    cpu() { if [[ $usage == *cpu.stat ]]; then awk '/usage_usec/{print $2 * 1000}' "$usage"; else cat "$usage"; fi; }
    wrk_run "${side#*=}" "$batch" 2 >/dev/null
    a=$(cpu); out=$(wrk_run "${side#*=}" "$batch" 5); b=$(cpu)
    n=$(awk '/requests in/{print $1}' <<<"$out")
    echo "${side%=*} batch $batch: $(( (b - a) / 1000 / n )) µs of the container's CPU a request, $(( (b - a) / 50000000 ))% of a core"
  done
done
uptime
