#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each on its seed files (see tests/fuzz/CMakeLists.txt),
# keeping the grown corpus in fuzz-corpus/NAME. A finding leaves a crash-* file and fails the run;
# turn each into a regression test under tests/unit/io.
# Usage: scripts/fuzz.sh [BUILD] [SECONDS] [NAME...]   (no NAME: every target, one after another)
set -euo pipefail
build="${1:-build-fuzz}"
seconds="${2:-60}"
shift $(( $# < 2 ? $# : 2 ))
declare -A seeds=(
  [fuzz_matrix_market]="data/suitesparse/LAGraph/data data/taco/test/data data/mlir/test/Integration/data data/debian-r-cran-matrix/external"
  [fuzz_frostt]="data/mlir/test/Integration/data data/taco/test/data"
  [fuzz_dlmc]="data/dlmc/rn50/magnitude_pruning/0.98"
  [fuzz_harwell_boeing]="data/suitesparse/UMFPACK/Demo/HB data/suitesparse/RBio/RBio/private data/debian-r-cran-matrix/external data/suitesparse/CHOLMOD/Demo/Matrix"
  [fuzz_npy]="tests/unit/io/npy_refs"
  [fuzz_sft]="tests/fuzz/sft_seeds"
  [fuzz_safetensors]="tests/fuzz/safetensors_seeds"
  [fuzz_read_file]="tests/fuzz/read_file_seeds"
  [fuzz_expr]="tests/fuzz/expr_seeds"
  [fuzz_schedule]="tests/fuzz/schedule_seeds"
  [fuzz_capi]="tests/fuzz/capi_seeds"
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${!seeds[@]}")
status=0
for name in "${names[@]}"; do
  [ -n "${seeds[$name]+x}" ] || { echo "fuzz.sh: no target named $name" >&2; status=1; continue; }
  bin="$build/bin/$name"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin is missing" >&2; status=1; continue; }
  corpus="fuzz-corpus/$name"
  mkdir -p "$corpus" "fuzz-artifacts/$name"
  existing=()
  for s in ${seeds[$name]}; do [ -e "$s" ] && existing+=("$s"); done
  echo "== $name: ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="fuzz-artifacts/$name/" "$corpus" "${existing[@]}" 2>"fuzz-artifacts/$name/log.txt"; then
    echo "== $name: FINDING (see fuzz-artifacts/$name/)"; tail -30 "fuzz-artifacts/$name/log.txt"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "fuzz-artifacts/$name/log.txt" || true
  fi
done
exit $status
