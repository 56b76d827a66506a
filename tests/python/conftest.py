# pytest setup for the Python package: fresh random seeds (printed on failure), a JIT cache
# inside the build rather than the user's, and paths to the bundled data.
import os
import pathlib
import tempfile

import numpy as np
import pytest

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"


def _jit_cache_dir() -> str:
    """<build>/python/jit-cache for a development build, else a temporary folder (never the
    user's cache, never inside an installed package)."""
    import sparseflow

    module_dir = pathlib.Path(sparseflow._C.__file__).parent
    if module_dir.name != "sparseflow" and os.access(module_dir, os.W_OK):
        return str(module_dir / "jit-cache")
    return tempfile.mkdtemp(prefix="sparseflow-test-jit-")


os.environ.setdefault("SPARSEFLOW_CACHE_DIR", _jit_cache_dir())


@pytest.fixture
def rng(request):
    """A numpy Generator seeded from os.urandom (or $SPARSEFLOW_TEST_SEED to reproduce)."""
    fixed = os.environ.get("SPARSEFLOW_TEST_SEED")
    seed = int(fixed) if fixed else int.from_bytes(os.urandom(4), "little")
    request.node.sparseflow_seed = seed
    return np.random.default_rng(seed)


@pytest.fixture
def torch_rng(rng):
    """torch's global generator seeded from the same fresh seed."""
    import torch

    torch.manual_seed(int(rng.integers(0, 2**31 - 1)))
    return rng


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed = getattr(item, "sparseflow_seed", None)
    if seed is not None and report.failed:
        report.sections.append(
            ("sparseflow", f"random seed {seed}; rerun with SPARSEFLOW_TEST_SEED={seed}"))


def random_sparse(rng, shape, density=0.2, dtype=np.float64):
    """A random scipy CSR matrix with values in [-1, 1) (explicit zeros never stored)."""
    import scipy.sparse as sp

    dense = rng.uniform(-1.0, 1.0, size=shape)
    dense[rng.random(shape) >= density] = 0.0
    return sp.csr_matrix(dense.astype(dtype))


def small_mtx_files():
    """A few small real matrices from the bundled data."""
    names = [
        "suitesparse/LAGraph/data/west0067.mtx",
        "suitesparse/Mongoose/Matrix/GD97_b.mtx",
        "suitesparse/LAGraph/data/skew_fp64.mtx",
        "taco/test/data/rua_32.mtx",
    ]
    return [DATA / n for n in names if (DATA / n).exists()]


DLMC_Q = ("dlmc/transformer/magnitude_pruning/0.5/"
          "body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx")


def dlmc_linear(rng, dtype=None, bias=True):
    """A torch nn.Linear whose weight has a real pruned transformer layer's pattern (DLMC,
    512 x 512 at 50%) with random values in [-1, 1), and a random bias."""
    import sparseflow as sf
    import torch

    pattern = sf.read(DATA / DLMC_Q).to_numpy() != 0
    weight = np.where(pattern, rng.uniform(-1.0, 1.0, pattern.shape), 0.0)
    linear = torch.nn.Linear(pattern.shape[1], pattern.shape[0], bias=bias)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(weight))
        if bias:
            linear.bias.copy_(torch.from_numpy(rng.uniform(-1.0, 1.0, pattern.shape[0])))
    return linear.to(dtype) if dtype is not None else linear
