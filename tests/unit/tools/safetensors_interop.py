#!/usr/bin/env python3
"""sparseflow's .safetensors against the reference implementation (PyPI `safetensors`).

A checkpoint written by `safetensors.numpy.save_file` is converted layer by layer by
`sparseflow-convert`; the result is loaded back by `safetensors` and its 2:4 and csr arrays are
decoded here from the layout docs/tools.md documents, then compared with numpy's own pruning.
Usage: safetensors_interop.py BIN_DIR. Exits 77 (skipped) when `safetensors` is not installed.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

try:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError:
    print("safetensors is not installed (scripts/install_deps.sh installs it): skipped")
    sys.exit(77)

BIN = pathlib.Path(sys.argv[1])
SEED = int(os.environ.get("SPARSEFLOW_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
print(f"seed {SEED}")
rng = np.random.default_rng(SEED)


def run(*args):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert done.returncode == 0, f"{args}: {done.stderr}"
    return done.stdout


def prune24(w):
    """Keep the 2 largest |w| of every 4 columns (ties: the lower column)."""
    rows, cols = w.shape
    out = np.zeros_like(w)
    for g in range(0, cols, 4):
        block = w[:, g:g + 4]
        order = np.argsort(-np.abs(block), axis=1, kind="stable")[:, :2]
        for r in range(rows):
            out[r, g + order[r]] = block[r, order[r]]
    return out


def decode24(values, meta, rows, cols):
    """The dense matrix of a 2:4 tensor: slot s holds values[s] at in-group offset
    (meta >> 2*(s % 4)) & 3 of byte s // 4; rows x ceil(cols/4) groups x 2 slots."""
    groups = (cols + 3) // 4
    slots = rows * groups * 2
    assert values.shape == (slots,) and meta.shape == ((slots * 2 + 7) // 8,)
    offsets = (meta[np.arange(slots) // 4] >> (2 * (np.arange(slots) % 4))) & 3
    dense = np.zeros((rows, groups * 4), values.dtype)
    s = np.arange(slots)
    row, group = s // (groups * 2), (s // 2) % groups
    dense[row, group * 4 + offsets] += values
    return dense[:, :cols]


def main():
    work = pathlib.Path(tempfile.mkdtemp(prefix="sparseflow-st-py-"))
    weight = rng.standard_normal((16, 30)).astype(np.float32)  # 30: a partial last group
    arrays = {
        "enc.fc.weight": weight,
        "enc.fc.bias": rng.standard_normal(16).astype(np.float32),
        "ids": np.arange(5, dtype=np.int64),
        "half": rng.standard_normal((4, 8)).astype(np.float16),
    }
    save_file(arrays, work / "ck.safetensors", metadata={"format": "np"})

    report = json.loads(run(BIN / "sparseflow-convert", work / "ck.safetensors", "--to", "2:4",
                            "--include", "*.weight", "-o", work / "out.safetensors", "--json"))
    actions = {t["name"]: t["action"] for t in report["tensors"]}
    assert actions == {"enc.fc.weight": "converted", "enc.fc.bias": "copied", "ids": "copied",
                       "half": "copied"}, actions

    out = load_file(work / "out.safetensors")  # the reference reader accepts the file
    with safe_open(work / "out.safetensors", "np") as f:
        metadata = f.metadata()
    assert metadata["format"] == "np", metadata
    record = json.loads(metadata["sparseflow"])
    assert record == {"version": 1, "tensors": {"enc.fc.weight": {
        "format": "2:4", "shape": [16, 30], "dtype": "F32"}}}, record
    assert set(out) == {"enc.fc.weight.values", "enc.fc.weight.level1.meta", "enc.fc.bias",
                        "ids", "half"}, set(out)
    for name in ("enc.fc.bias", "ids", "half"):
        assert out[name].dtype == arrays[name].dtype and np.array_equal(out[name], arrays[name])
    dense = decode24(out["enc.fc.weight.values"], out["enc.fc.weight.level1.meta"], 16, 30)
    np.testing.assert_array_equal(dense, prune24(weight))

    # The other way: sparseflow's dense and csr tensors read by safetensors, f16 kept.
    np.save(work / "w.npy", weight)
    run(BIN / "sparseflow", "convert", work / "w.npy", "--to", "dense", "-o", work / "d.safetensors")
    np.testing.assert_array_equal(load_file(work / "d.safetensors")["w"], weight)
    run(BIN / "sparseflow", "convert", work / "ck.safetensors", "--include", "half", "--to", "csr",
        "-o", work / "h.safetensors")
    h = load_file(work / "h.safetensors")
    pos, crd, values = h["half.level1.pos"], h["half.level1.crd"], h["half.values"]
    assert values.dtype == np.float16 and pos.dtype == np.int32, (values.dtype, pos.dtype)
    rebuilt = np.zeros((4, 8), np.float16)
    for r in range(4):
        rebuilt[r, crd[pos[r]:pos[r + 1]]] = values[pos[r]:pos[r + 1]]
    np.testing.assert_array_equal(rebuilt, arrays["half"])
    print("ok")


main()
