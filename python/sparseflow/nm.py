"""n:m structured sparsity on weight matrices: prune, check, compress, and what pruning cost."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from ._ext import _C
from .tensors import Tensor, as_tensor


@dataclass(frozen=True)
class SparsifyDiff(Mapping):
    """What pruning cost, in float64 over all elements, with e = original - pruned.

    max_error = max |e|; mean_error = sum |e| / total; relative_error = ||e||_F / ||original||_F;
    kept_magnitude = sum |original| where kept / sum |original| (in (0, 1] unless all zero);
    kept = nonzeros kept; total = elements. Also a read-only mapping of those six names:
    ``diff["max_error"]``, ``"max_error" in diff``, ``dict(diff)``, ``diff.keys()``.
    """

    max_error: float
    mean_error: float
    relative_error: float
    kept_magnitude: float
    kept: int
    total: int

    @classmethod
    def from_impact(cls, impact) -> "SparsifyDiff":
        return cls(impact.max_abs_error, impact.mean_abs_error, impact.relative_frobenius_error,
                   impact.kept_magnitude_fraction, impact.kept, impact.total)

    def __getitem__(self, key: str):
        if key not in _DIFF_FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(_DIFF_FIELDS)

    def __len__(self) -> int:
        return len(_DIFF_FIELDS)

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        share = self.kept / self.total if self.total else 1.0
        return (f"kept {share:.2%} ({self.kept} of {self.total}), max error {self.max_error:.4g}, "
                f"mean error {self.mean_error:.4g}, relative error {self.relative_error:.4g}, "
                f"kept magnitude {self.kept_magnitude:.2%}")


_DIFF_FIELDS = tuple(field.name for field in fields(SparsifyDiff))


def pattern(text: str) -> str:
    """The canonical text of an n:m pattern ("2:4"); raises for a malformed or invalid one."""
    return _C.nm_pattern(text)


def prune(weights, pattern: str = "2:4") -> Tensor:
    """Magnitude pruning along rows: in every group of m columns the n largest |w| stay (ties
    to the lower column). A dense tensor of the same dtype and shape."""
    return _C.nm_prune(as_tensor(weights), pattern)


def validate(weights, pattern: str = "2:4") -> None:
    """Raises InvalidArgument naming the first group that holds more than n nonzeros."""
    _C.nm_validate(as_tensor(weights), pattern)


def is_nm(weights, pattern: str = "2:4") -> bool:
    """True when every group of m holds at most n nonzeros."""
    return _C.nm_is_nm(as_tensor(weights), pattern)


def compress(weights, pattern: str = "2:4") -> Tensor:
    """An already n:m matrix in the n:m format (raises as validate otherwise)."""
    return _C.nm_compress(as_tensor(weights), pattern)


def decompress(tensor: Tensor) -> Tensor:
    """The dense matrix back from an n:m tensor, exactly."""
    return _C.nm_decompress(tensor)


def measure_impact(original, pruned) -> SparsifyDiff:
    """What replacing ``original`` by ``pruned`` cost (any formats and float dtypes)."""
    return SparsifyDiff.from_impact(_C.nm_measure_impact(as_tensor(original), as_tensor(pruned)))


def sparsify(weights, pattern: str = "2:4") -> tuple[Tensor, SparsifyDiff]:
    """prune + compress + measure_impact in one pass: (the n:m tensor, what it cost)."""
    compressed, impact = _C.nm_sparsify(as_tensor(weights), pattern)
    return compressed, SparsifyDiff.from_impact(impact)


__all__ = ["SparsifyDiff", "compress", "decompress", "is_nm", "measure_impact", "pattern",
           "prune", "sparsify", "validate"]
