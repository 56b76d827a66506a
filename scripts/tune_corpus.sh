#!/usr/bin/env bash
# Rebuilds the autoconfigurator's shipped cost model (docs/tune.md): times a seeded sample of the
# SpMM, SpMV and SDDMM spaces (`sparseflow tune collect`) on the corpus below, then trains one
# ranker for the three (`sparseflow tune train`; the kernel features tell them apart) with whole
# sources held out, and writes
#   data/tune/corpus/KERNEL_NAME.jsonl  the measurements, one line per timed configuration (not
#                                 committed: tens of MB, and times of this machine)
#   data/tune/model.json          the model that ships (trained without the held-out sources)
#   data/tune/holdout.txt         its report on the held-out problems
#
#   scripts/tune_corpus.sh [BUILD_DIR] [--sample N] [--heldout-sample M] [--kernels "spmm spmv sddmm"]
#                          [--train-only] [--resume]
#
# Training problems time the default and a seeded sample of N configurations (default 200); the
# held-out ones M (default 0: every configuration, so that the report compares the search's
# choice with the exhaustive best). --resume keeps the problems whose measurements are already in
# data/tune/corpus (a run that stopped part way goes on where it stopped; the seeds stay those of
# a full run).
#
# Kernels: SpMM C(i,j) = A(i,k) * B(k,j) with 64 columns of B, SpMV y(i) = A(i,j) * x(j), and
# SDDMM C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k)) with 32 columns of X and Y and C csr (A's
# pattern; 42 legal configurations on a square matrix, all timed). Trained on DLMC transformer layers
# (magnitude and random pruning), SuiteSparse ParU matrices and generated structures (power law,
# 4x4 blocks, a band: scripts/tune_structures.py); held out by source: DLMC ResNet-50 layers and
# SuiteSparse LAGraph matrices (never a permutation of a training matrix). Each timed
# configuration compiles its own kernel (seconds of JIT each, cached on disk): a full run takes
# 0.3-0.5 s per configuration the first time; the generated code depends on the configuration,
# not on the matrix, so later problems reuse the cache (3 kernels x (25 + 10) problems: about 25
# minutes here). Run it on an otherwise idle machine: the labels are times.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
sample=200
heldout_sample=0
kernels="spmm spmv sddmm"
train_only=0
resume=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sample) sample="$2"; shift 2 ;;
    --heldout-sample) heldout_sample="$2"; shift 2 ;;
    --kernels) kernels="$2"; shift 2 ;;
    --train-only) train_only=1; shift ;;
    --resume) resume=1; shift ;;
    *) build="$1"; shift ;;
  esac
done
sf="$build/bin/sparseflow"
[[ -x "$sf" ]] || { echo "tune_corpus.sh: $sf not built (make build)" >&2; exit 1; }
out=data/tune
mkdir -p "$out/corpus"

dlmc=data/dlmc
ss=data/suitesparse
train=(
  "$dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_ffn_conv2_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_self_attention_multihead_attention_v_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.5/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.5/body_encoder_layer_0_ffn_conv1_fully_connected.smtx"
  "$dlmc/transformer/magnitude_pruning/0.5/body_encoder_layer_0_ffn_conv2_fully_connected.smtx"
  "$dlmc/transformer/random_pruning/0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx"
  "$dlmc/transformer/random_pruning/0.9/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"
  "$ss/ParU/Matrix/bayer10.mtx"
  "$ss/ParU/Matrix/arrow.mtx"
  "$ss/ParU/Matrix/rajat01.mtx"
  "$ss/ParU/Matrix/Groebner_id2003_aug.mtx"
  "$ss/ParU/Matrix/Franz6_id1959_aug.mtx"
  "$ss/ParU/Matrix/nnc1374.mtx"
  "$ss/ParU/Matrix/watt_2.mtx"
  "$ss/ParU/Matrix/hangGlider_2.mtx"
  "$ss/ParU/Matrix/adder_dcop_05.mtx"
  "$ss/Mongoose/Matrix/Pd.mtx"
)
heldout=(
  "$dlmc/rn50/magnitude_pruning/0.9/final_dense.smtx"
  "$dlmc/rn50/magnitude_pruning/0.9/bottleneck_2_block_group3_1_1.smtx"
  "$dlmc/rn50/magnitude_pruning/0.9/bottleneck_3_block_group4_1_1.smtx"
  "$dlmc/rn50/magnitude_pruning/0.9/bottleneck_1_block_group4_1_1.smtx"
  "$ss/LAGraph/data/bcsstk13.mtx"
  "$ss/LAGraph/data/pushpull.mtx"
  "$ss/LAGraph/data/cryg2500.mtx"
  "$ss/LAGraph/data/zenios.mtx"
  "$ss/LAGraph/data/dnn_data/sparse-images-1024_subset.mtx"
  "$ss/LAGraph/data/dnn_data/n1024-l1.mtx"
)

if [[ $train_only == 0 ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  .venv/bin/python scripts/tune_structures.py "$work" --cols 64 --rhs-for "${train[@]}" "${heldout[@]}"
  generated=("$work"/powerlaw_*.mtx "$work"/blocks*.mtx "$work"/band*.mtx)
  seed=1
  for kernel_name in $kernels; do
    for a in "${train[@]}" "${generated[@]}" "${heldout[@]}"; do
      read -r rows cols < <(.venv/bin/python -c "import sys; sys.path.insert(0, 'scripts'); \
from tune_structures import shape; print(*shape('$a'))")
      pins=()
      case "$kernel_name" in
        spmm) kernel="C(i,j) = A(i,k) * B(k,j)"; dense=(--in "B=$work/b_64_$cols.npy") ;;
        spmv) kernel="y(i) = A(i,j) * x(j)"; dense=(--in "x=$work/x_$cols.npy") ;;
        # SDDMM's output in A's pattern (csr), as its peers write it (a dense C would time a
        # memset of rows x cols per call).
        sddmm) kernel="C(i,j) = A(i,j) * sum(k, X(i,k) * Y(j,k))"
               dense=(--in "X=$work/d_32_$rows.npy" --in "Y=$work/d_32_$cols.npy")
               pins=(--format C=csr) ;;
      esac
      # The source folder names the problem (generated/ for the generated ones), so that
      # --holdout matches by source.
      case "$a" in
        "$work"/*) name="generated_$(basename "${a%.*}")"; label="generated/$(basename "$a")" ;;
        *) name=$(echo "${a#data/}" | tr '/' '_'); name="${name%.*}"; label="$a" ;;
      esac
      n=$sample
      [[ " ${heldout[*]} " == *" $a "* ]] && n=$heldout_sample
      if [[ $resume == 1 && -s "$out/corpus/${kernel_name}_$name.jsonl" ]]; then
        echo "== $kernel_name $label: measured already (--resume)" >&2
        seed=$((seed + 1))
        continue
      fi
      echo "== $kernel_name $label (seed $seed, sample $n)" >&2
      "$sf" tune collect "$kernel" --in "A=$a" "${dense[@]}" "${pins[@]}" --tune A \
        --sample "$n" --seed "$seed" -o "$out/corpus/${kernel_name}_$name.jsonl"
      seed=$((seed + 1))
    done
  done
fi

"$sf" tune train "$out"/corpus/*.jsonl -o "$out/model.json" \
  --holdout dlmc/rn50 --holdout suitesparse/LAGraph 2>&1 | tee "$out/holdout.txt"
