#!/usr/bin/env bash
# The main job for now: read every bundled real matrix, convert it through the format presets and
# print storage bytes and conversion times per format; then compile kernels written in index
# notation for the formats bound to them and run them on real matrices (the issue-5 audit job
# replaces this later).
set -euo pipefail
build="${1:-build}"
cd "$(dirname "$0")/.."
"$build/bin/sparseflow" survey data

work="$(mktemp -d "${TMPDIR:-/tmp}/sparseflow-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
python=.venv/bin/python
echo
echo "== Compiled kernels on real matrices (generated C++, JIT-compiled and cached; median of 20 runs)"
for matrix in data/suitesparse/LAGraph/data/bcsstk13.mtx \
              data/suitesparse/ParU/Matrix/bayer10.mtx \
              data/dlmc/transformer/magnitude_pruning/0.5/body_encoder_layer_0_ffn_conv1_fully_connected.smtx; do
  # Dense operands of the right sizes, drawn fresh (the header line gives rows and columns).
  "$python" - "$matrix" "$work" <<'PY'
import sys, numpy as np, re
path, work = sys.argv[1], sys.argv[2]
with open(path) as f:
    for line in f:
        if not line.startswith('%'):
            rows, cols = (int(v) for v in re.split(r'[\s,]+', line.strip())[:2])
            break
rng = np.random.default_rng()
np.save(f"{work}/x.npy", rng.standard_normal(cols).astype(np.float32))
np.save(f"{work}/B.npy", rng.standard_normal((cols, 64)).astype(np.float32))
np.save(f"{work}/b.npy", rng.standard_normal(64).astype(np.float32))
PY
  echo "-- $matrix"
  "$build/bin/sparseflow" run "y(i) = A(i,j) * x(j)" --format A=csr --in "A=$matrix" \
    --in "x=$work/x.npy" --repeat 20 | grep -E "median_ms|nest|ran in" | sed 's/^/   spmv  /'
  "$build/bin/sparseflow" run "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))" --format A=csr \
    --in "A=$matrix" --in "B=$work/B.npy" --in "b=$work/b.npy" --repeat 20 \
    | grep -E "median_ms|nest|ran in" | sed 's/^/   spmm+bias+relu  /'
done
