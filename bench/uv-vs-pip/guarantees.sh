#!/usr/bin/env bash
# Guarantee checks on the images measure.sh kept (uvpip-measure/{pip,uv}:run$RUNS).
# Prints each check with its command's output; nothing here writes outside the containers (--rm).
set -uo pipefail
cd "$(dirname "$0")"
R=${RUNS:-2}
PIPIMG=uvpip-measure/pip:run$R
UVIMG=uvpip-measure/uv:run$R
root() { docker run --rm -u root --entrypoint /bin/sh "$1" -c "$2" 2>&1; }
hdr() { printf '\n===== %s\n' "$*"; }

hdr "1. pip freeze --all identical (run$R images; every run's freeze in results/*.freeze)"
for f in results/*.freeze; do printf '%s %s lines, sha256 %s\n' "$f" "$(wc -l < "$f")" "$(grep -v '^uv==' "$f" | sha256sum | cut -c1-16)"; done
diff results/pip-run$R.freeze results/uv-run$R.freeze && echo IDENTICAL || echo "DIFFERS (above)"

hdr "2. TensorFlow imports, pip check (both images)"
for img in $PIPIMG $UVIMG; do
  echo "-- $img"
  root "$img" "python -c 'import tensorflow as tf; print(\"tf\", tf.__version__)' 2>&1 | grep -v -i 'cuda\|dso\|could not load\|ignore above' ; pip check"
done

hdr "3. Hash checking with uv: a lock with --hash=sha256 installs; one altered hash fails naming the package"
root "$UVIMG" '
set -e
cd /tmp
printf "%s\n" "jupyterlab>=4,<5" matplotlib pandas > in.txt
uv pip compile -q --no-cache --python /opt/venv/bin/python --constraints /opt/tfimg/constraints.txt --generate-hashes in.txt -o lock.txt
echo "lock: $(grep -c "^[a-z0-9]" lock.txt) distributions, $(grep -c -- "--hash=sha256:" lock.txt) hashes"
python3 -m venv --without-pip /tmp/good
uv pip install -q --no-cache --python /tmp/good/bin/python --require-hashes --no-deps -r lock.txt && echo "GOOD LOCK: installed $(uv pip list --python /tmp/good/bin/python 2>/dev/null | tail -n +3 | wc -l) distributions"
# flip the last hex digit of every hash listed under pandas (a lock lists one per wheel/sdist
# of the release; pip and uv accept a file matching ANY of them, so all must be altered)
python3 - <<"PY"
import re
text = open("lock.txt").read()
start = text.index("\npandas==") + 1
end = re.compile(r"^\S", re.M).search(text, start + 1).start()
flip = lambda m: m.group(1)[:-1] + ("1" if m.group(1)[-1] == "0" else "0")
block = re.sub(r"(?<=--hash=sha256:)([0-9a-f]{64})", flip, text[start:end])
open("bad.txt", "w").write(text[:start] + block + text[end:])
PY
echo "altered: $(diff lock.txt bad.txt | grep -c "^>") hash lines, all under: $(grep "^pandas==" bad.txt)"
python3 -m venv --without-pip /tmp/bad
set +e
uv pip install --no-cache --python /tmp/bad/bin/python --require-hashes --no-deps -r bad.txt > uv.out 2>&1; echo "uv exit: $?"; grep -v "^ *Download" uv.out
echo "-- a requirement without hash under --require-hashes:"
echo "six==1.16.0" > nohash.txt
uv pip install --no-cache --python /tmp/bad/bin/python --require-hashes --no-deps -r nohash.txt; echo "uv exit: $?"
echo "-- same altered lock with pip 24.0 (for comparison):"
python3 -m venv /tmp/pbad
PIP_CONSTRAINT= /tmp/pbad/bin/pip install -q --require-hashes --no-deps -r bad.txt > pip.out 2>&1; echo "pip exit: $?"; grep -v "^ *\(Expected\|Got\)" pip.out | tail -4; grep -A2 "^ *pandas" pip.out
'

hdr "4. Constraints: installed versions honour the pins; uv honours --constraints; uv ignores PIP_CONSTRAINT (users keep pip)"
grep -E '^(tensorflow|numpy|protobuf|nvidia-cudnn-cu11|nvidia-cublas-cu11)==' results/uv-run$R.freeze
root "$UVIMG" '
echo "-- uv with --constraints, asking numpy>=1.24 (constraint numpy<1.24):"
uv pip install --no-cache --dry-run --constraints /opt/tfimg/constraints.txt "numpy>=1.24"; echo "uv exit: $?"
echo "-- uv WITHOUT --constraints, PIP_CONSTRAINT=$PIP_CONSTRAINT set in the image env:"
uv pip install --no-cache --dry-run "numpy>=1.24"; echo "uv exit: $?"
echo "-- pip (users), PIP_CONSTRAINT from the image env:"
pip install --dry-run "numpy>=1.24" > /tmp/p.out 2>&1; echo "pip exit: $?"; grep -i "conflict\|ResolutionImpossible\|numpy" /tmp/p.out | head -4
'
echo "-- pip as the image default user (tf):"
docker run --rm --entrypoint /bin/sh "$UVIMG" -c 'id -un; pip --version; pip install --dry-run "numpy>=1.24" > /tmp/p.out 2>&1; echo "pip numpy>=1.24 exit: $?"; pip install --dry-run six==1.16.0 2>&1 | tail -1'

hdr "5. CA and proxy: uv uses SSL_CERT_FILE (the bundle with tfimg-ca.crt); without it, fails; HTTPS_PROXY honoured; PIP_INDEX_URL NOT honoured"
root "$UVIMG" '
echo "-- SSL_CERT_FILE=$SSL_CERT_FILE:"; uv pip install --no-cache --dry-run six==1.16.0 2>&1 | tail -1
echo "-- SSL_CERT_FILE unset:"; env -u SSL_CERT_FILE uv pip install --no-cache --dry-run six==1.16.0 2>&1 | tail -3
echo "-- SSL_CERT_FILE unset, --system-certs:"; env -u SSL_CERT_FILE uv pip install --system-certs --no-cache --dry-run six==1.16.0 2>&1 | tail -1
echo "-- HTTPS_PROXY=http://127.0.0.1:9 (nothing listens):"; HTTPS_PROXY=http://127.0.0.1:9 uv pip install --no-cache --dry-run six==1.16.0 2>&1 | tail -3
echo "-- pip, same proxy:"; HTTPS_PROXY=http://127.0.0.1:9 pip install --retries 0 --timeout 3 --dry-run six==1.16.0 2>&1 | tail -2
echo "-- PIP_INDEX_URL=http://127.0.0.1:9/simple (tfimg --pip-index-url): uv"; PIP_INDEX_URL=http://127.0.0.1:9/simple uv pip install --no-cache --dry-run six==1.16.0 2>&1 | tail -1
echo "-- UV_DEFAULT_INDEX=http://127.0.0.1:9/simple: uv"; UV_DEFAULT_INDEX=http://127.0.0.1:9/simple uv pip install --no-cache --dry-run six==1.16.0 2>&1 | tail -2
'
