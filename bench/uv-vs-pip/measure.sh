#!/usr/bin/env bash
# Cold build of tfimg's gpu-jupyter Dockerfile with pip (pip/) and with uv (uv/), interleaved
# pip, uv, pip, uv, ... RUNS pairs (or ORDER='uv:1 pip:2 uv:2' to resume); legacy builder (as tfimg uses), --no-cache, same base.
# Results in results/: <variant>-run<i>.log (stamped build log), .steps, .freeze, summary.tsv
set -euo pipefail
cd "$(dirname "$0")"
RUNS=${RUNS:-2}
KEEP_LAST=${KEEP_LAST:-1}   # keep the last image of each variant for guarantee checks
mkdir -p results
ORDER=${ORDER:-$(for i in $(seq 1 "$RUNS"); do printf 'pip:%s uv:%s ' "$i" "$i"; done)}
for item in $ORDER; do
  v=${item%%:*}; i=${item##*:}
  {
    tag=uvpip-measure/$v:run$i
    log=results/$v-run$i.log
    start=$(date +%s.%N)
    DOCKER_BUILDKIT=0 docker build --no-cache --rm --force-rm -t "$tag" "$v/" 2>&1 | python3 -u stamp.py > "$log"
    end=$(date +%s.%N)
    wall=$(python3 -c "print(f'{$end-$start:.1f}')")
    python3 steps.py "$log" > "results/$v-run$i.steps"
    tf=$(grep -m1 'mkdir -p /opt/tfimg' "results/$v-run$i.steps" | awk '{print $1}') || tf=?
    spec=$(grep -m1 "jupyterlab" "results/$v-run$i.steps" | awk '{print $1}') || spec=?
    size=$(docker image inspect -f '{{.Size}}' "$tag")
    docker run --rm --entrypoint /opt/venv/bin/pip "$tag" freeze --all > "results/$v-run$i.freeze"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$i" "$wall" "$tf" "$spec" "$size" | tee -a results/summary.tsv
    if [ "$i" != "$RUNS" ] || [ "$KEEP_LAST" != 1 ]; then docker rmi "$tag" > /dev/null; fi
  }
done
