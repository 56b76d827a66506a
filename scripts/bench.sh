#!/usr/bin/env bash
# Runs the benchmarks with their peers and prints one table (speedup over each peer, fraction of
# this machine's limits), also written to bench/RESULTS.md. Usage: scripts/bench.sh [BUILD_DIR]
set -euo pipefail
build="${1:-build-bench}"
cd "$(dirname "$0")/.."
python=.venv/bin/python
if [ ! -x "$python" ]; then
  echo "bench.sh: $python is missing (run scripts/install_deps.sh bench)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sparseflow-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# The largest bundled real Matrix Market file: read, converted and compared with scipy.
real_mtx="$(find data -name '*.mtx' -type f -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"

echo "== machine limits (measured once for the whole run)"
"$build/bin/bench_limits" --out="$work/limits.txt"

echo "== formats: COO->CSR, CSR->CSC, Matrix Market read; peer: scipy"
"$build/bin/bench_formats" --python="$python" --real-mtx="$real_mtx" \
  --limits="$work/limits.txt" --rows="$work/rows.tsv" --data-dir="$work/formats"
rm -rf "$work/formats"

echo "== sparseflow convert as a process (time, peak RSS): 10^7 entries in 10^6 x 10^6, arrow;" \
     "peer: scipy mmread + tocsr + save_npz, also as a process"
"$python" bench/cli_convert.py --sparseflow "$build/bin/sparseflow" --rows "$work/rows.tsv" \
  --limits "$work/limits.txt"

echo "== the pipeline's providers as users reach them: fused SpMM epilogue vs plain, 2:4 GEMV" \
     "through sparseflow run, Python per-call cost; peers: the plain SpMM, OpenBLAS sgemv"
"$python" bench/cli_pipeline.py --sparseflow "$build/bin/sparseflow" --rows "$work/rows.tsv" \
  --limits "$work/limits.txt"

echo "== 2:4 GEMM (NMLinear) on transformer shapes, batch 1/8/32/128, f32/bf16/f16, and the" \
     "compression pipeline; peers: OpenBLAS, oneDNN, DenseLinear (dense, same run)"
"$build/bin/bench_nm_gemm" --limits="$work/limits.txt" --rows="$work/rows.tsv"
echo "== 2:4 GEMM epilogue families (4096x4096, batch 1 and 32)"
"$build/bin/bench_nm_gemm" --limits="$work/limits.txt" --rows="$work/rows.tsv" \
  --shapes=4096x4096 --batches=1,32 --dtypes=f32,bf16 --no-pipeline \
  --epilogues=none,bias,relu,silu,gelu_erf,gelu_tanh,bias+relu,bias+silu,bias+gelu_tanh

echo "== JIT: first compile and cached load of a generated SpMM kernel"
"$build/bin/bench_jit" | tee "$work/jit.md"

echo "== compiled kernels: SpMV, SpMM (32, 128), SDDMM, SpGEMM on the bundled real matrices and" \
     "a synthetic banded one past the LLC (SpMV only); peers: scipy, torch.sparse, Eigen," \
     "SuiteSparse:GraphBLAS"
"$build/bin/bench_compiler" --python="$python" --limits="$work/limits.txt" --rows="$work/rows.tsv" \
  --synthetic=banded:2000000:16

{
  echo "# Benchmark results"
  echo
  echo "- Command: \`make bench\` (installs what is missing, builds $build, runs \`scripts/bench.sh $build\`)"
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
       "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
  echo "- Software: $(g++ --version | head -1);" \
       "$("$python" -c 'import scipy, numpy; print(f"scipy {scipy.__version__}, numpy {numpy.__version__}")')"
  echo "- Load average (1, 5, 15 min) before the run: $load_before; after:" \
       "$(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine slows the 2-thread cases first)"
  echo
  echo "How to read it: *sparseflow* and *peer time* are medians of repeated runs (5 unless the"
  echo "peer's time budget ran out; calls under 50 ms are timed in batches) on the same inputs in"
  echo "the same run: the peer reads the triplets as .npy files that bench_formats wrote, and the"
  echo "same .mtx files. *speedup* is peer time / our time (above 1: sparseflow is faster). *floor*"
  echo "is the time to move the case's bytes once (input read plus output written) at the streaming"
  echo "bandwidth measured for that thread count; *of limit* is floor / our time. COO inputs are"
  echo "the library's \`Coo\` (int64 coordinates, double values, unsorted); scipy gets int32/float32"
  echo "arrays, as it would hold them. Results are f32 with int32 indices on both sides."
  echo
  echo "The 2:4 GEMM rows (nm_gemm/...) compare with dense GEMM/GEMV on the unpruned weights;"
  echo "their floor is the packed weights' bytes at the streaming bandwidth for batch <= 8 and the"
  echo "useful (sparse) flops at the FMA peak above. bf16/f16 rows compare with dense f32 when no"
  echo "dense peer has the dtype on this CPU (the note says so). Compiled-kernel rows (compiler/...)"
  echo "time \`Kernel::run\` into a preallocated output after a float64 check of the result."
  echo
  "$build/bin/bench_report" "$work/limits.txt" "$work/rows.tsv"
  echo
  echo "## JIT"
  echo
  cat "$work/jit.md"
} > "$work/RESULTS.md"
cp "$work/RESULTS.md" bench/RESULTS.md
echo
cat bench/RESULTS.md
