#!/usr/bin/env bash
# The main job (issue 5), on bundled real data: audit the pruned weights of a whole ResNet-50 and of
# Transformer encoder layers (DLMC, values drawn with a fixed seed), convert them to 2:4 and to the
# best format per layer, run them (the audit times DenseLinear, NMLinear and compiled sparse
# kernels on this machine and compares their outputs), and print the accuracy impact and the
# measured speed-ups; then compiled kernels on real matrices; then a real transformer
# (all-MiniLM-L6-v2) pruned three ways and run through sf.optimize against PyTorch, checked equal
# to torch on the same pruned weights (examples/minilm/). Ends with its own wall time.
set -euo pipefail
build="${1:-build}"
cd "$(dirname "$0")/.."
bin="$build/bin"
start=$(date +%s)
work="$(mktemp -d "${TMPDIR:-/tmp}/sparseflow-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT

rn50=data/dlmc/rn50/magnitude_pruning/0.98
transformer=data/dlmc/transformer/magnitude_pruning/0.5

# OpenMP's barriers stall whenever another process holds one of the cores, so on a machine already
# busier than its cores the audit times one thread (said, not hidden: the report prints the load).
threads=()
cores=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > c) }'; then
  echo "(load average $load is above the $cores cores: timing with --threads 1)"
  threads=(--threads 1)
fi

echo "== 1. Audit: a whole ResNet-50 (DLMC rn50, magnitude pruning to 98% sparsity, 54 layers)"
"$bin/sparseflow-audit" "$rn50" --batch 1,32 --runs 5 "${threads[@]}"

echo
echo "== 2. Audit: Transformer encoder layers (DLMC, magnitude pruning to 50%: where 2:4 is natural)"
"$bin/sparseflow-audit" "$transformer" --batch 1,32 --runs 5 "${threads[@]}"

echo
echo "== 3. Convert: the Transformer layers to 2:4 (a .safetensors checkpoint; what pruning costs)"
"$bin/sparseflow-convert" "$transformer" --to 2:4 -o "$work/transformer-2of4.safetensors"
echo "-- the ResNet-50 to 2:4, and to the smallest exact format of each layer (a directory)"
"$bin/sparseflow-convert" "$rn50" --to 2:4 -o "$work/rn50-2of4.safetensors" | grep -E "^converted"
"$bin/sparseflow-convert" "$rn50" --to smallest -o "$work/rn50-best" | grep -E "^converted"
echo "   formats chosen: $(ls "$work/rn50-best" | wc -l) files; the 2:4 checkpoint holds" \
     "$(du -h "$work/rn50-2of4.safetensors" | cut -f1)"

echo
echo "== 4. Run the converted 2:4 Transformer checkpoint: it now fits 2:4 as is (no further change)"
"$bin/sparseflow-audit" "$work/transformer-2of4.safetensors" --batch 1,32 --runs 5 "${threads[@]}" \
  | sed -n '/^layer/,/^$/p;/^totals/,/^$/p'

python=.venv/bin/python
echo
echo "== 5. Compiled kernels on real matrices (generated C++, JIT-compiled and cached; median of 20 runs)"
for matrix in data/suitesparse/LAGraph/data/bcsstk13.mtx \
              data/suitesparse/ParU/Matrix/bayer10.mtx; do
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
  "$bin/sparseflow" run "y(i) = A(i,j) * x(j)" --format A=csr --in "A=$matrix" \
    --in "x=$work/x.npy" --repeat 20 | grep -E "median_ms|nest|ran in" | sed 's/^/   spmv  /'
  "$bin/sparseflow" run "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))" --format A=csr \
    --in "A=$matrix" --in "B=$work/B.npy" --in "b=$work/b.npy" --repeat 20 \
    | grep -E "median_ms|nest|ran in" | sed 's/^/   spmm+bias+relu  /'
done

echo
echo "== 6. A real transformer: all-MiniLM-L6-v2 embeds sentences; pruned three ways (2:4 and 90%"
echo "   calibrated with SparseGPT, half the FFN neurons removed), sf.optimize against PyTorch"
# The package and this build's module first on the path (the .venv's .pth names the last build).
# The example exits non-zero if an optimized model differs from torch by more than 1e-4.
step6=$(date +%s)
PYTHONPATH="$PWD/python:$(cd "$build/python" && pwd)" \
  "$python" examples/minilm/embed_and_optimize.py --quick "${threads[@]}"
echo "   (step 6 took $(( $(date +%s) - step6 )) s)"

echo
echo "demo finished in $(( $(date +%s) - start )) s"
