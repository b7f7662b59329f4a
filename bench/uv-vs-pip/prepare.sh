#!/usr/bin/env bash
# Makes pip/ (the context tfimg renders for gpu-jupyter) and uv/ (the same with uv.patch
# applied: uv installs the same pins), then `./measure.sh` times cold builds of both.
# The measurement of 2026-11-22 rendered main afae3eb (before built-ins had locks).
set -euo pipefail
cd "$(dirname "$0")"
tfimg=${TFIMG:-../../target/debug/tfimg}
rm -rf pip uv
"$tfimg" render gpu-jupyter --ca-cert "${TFIMG_CA_CERT:-/etc/ssl/certs/ca-certificates.crt}" -o pip
cp -a pip uv
patch -d uv -p1 < uv.patch || { echo "uv.patch no longer applies to this render: edit uv/Dockerfile by hand as the patch shows" >&2; exit 1; }
