# Errors from C++ arrive as Python exceptions of the class their code names, with the message.
import numpy as np
import pytest

import sparseflow as sf

HIERARCHY = {
    sf.InvalidArgument: ValueError,
    sf.ParseError: ValueError,
    sf.IoError: OSError,
    sf.NotSupported: NotImplementedError,
    sf.OutOfRange: IndexError,
    sf.InvalidFormat: ValueError,
    sf.InternalError: RuntimeError,
    sf.CompileError: RuntimeError,
    sf.OutOfMemory: MemoryError,
}


@pytest.mark.parametrize("cls", list(HIERARCHY), ids=lambda c: c.__name__)
def test_hierarchy(cls):
    assert issubclass(cls, sf.SparseFlowError) and issubclass(cls, HIERARCHY[cls])
    assert cls.__module__ == "sparseflow" and cls.__doc__


def test_bad_format_string():
    with pytest.raises(sf.InvalidArgument, match="unknown format 'bsr:4y4'|bsr") as info:
        sf.convert(np.eye(4), "bsr:4y4")
    assert info.value.code == "invalid argument"


def test_unknown_dtype():
    with pytest.raises(sf.InvalidArgument, match="unknown dtype 'f128'"):
        sf.from_numpy(np.eye(2), dtype="f128")


def test_invalid_arrays_are_refused_before_use():
    pos = np.array([0, 2, 1], dtype=np.int32)  # decreasing positions
    crd = np.array([0, 1], dtype=np.int32)
    values = np.ones(2)
    with pytest.raises(sf.InvalidFormat) as info:
        sf._C._from_arrays([2, 2], "csr", [(None, None, None), (pos, crd, None)], values)
    assert isinstance(info.value, ValueError) and str(info.value)
    wrong_width = np.array([0, 1, 2], dtype=np.int64)
    with pytest.raises(sf.InvalidArgument, match="@i64"):
        sf._C._from_arrays([2, 2], "csr", [(None, None, None), (wrong_width, crd, None)], values)


def test_nm_validate_names_the_group():
    w = np.array([[1.0, 2.0, 3.0, 0.0]])
    with pytest.raises(sf.InvalidArgument, match="row 0, columns 0..3 hold 3 nonzeros"):
        sf.nm.validate(w, "2:4")
    with pytest.raises(sf.SparseFlowError):
        sf.nm.pattern("4:2")


def test_python_side_errors_use_the_same_classes():
    with pytest.raises(sf.InvalidArgument):
        sf.from_numpy(np.array(["a", "b"]))
    with pytest.raises(sf.NotSupported):
        sf.compile("y(i) = A(i,j) * x(j)", schedule=["anything"])


def test_nm_helpers(rng):
    w = rng.standard_normal((6, 16))
    pruned = sf.nm.prune(w)
    assert sf.nm.is_nm(pruned) and not sf.nm.is_nm(w)
    compressed = sf.nm.compress(pruned)
    assert compressed.format == "2:4"
    np.testing.assert_array_equal(sf.nm.decompress(compressed).to_numpy(), pruned.to_numpy())
    diff = sf.nm.measure_impact(w, pruned)
    compressed2, diff2 = sf.nm.sparsify(w)
    assert diff == diff2 and compressed2.format == "2:4"


def test_messages_that_are_not_utf8_still_raise_the_error():
    # A corrupted file's bytes in a message: U+FFFD, never a UnicodeDecodeError hiding the error.
    with pytest.raises(sf.ParseError) as info:
        sf._C._raise_error(2, b"bad.sft: byte 48: unknown format '\xff\xfe\x1b'")
    assert "bad.sft: byte 48: unknown format '\ufffd\ufffd\x1b'" == str(info.value)
    assert info.value.code == "parse error"


def test_out_of_memory_in_cxx_is_the_named_error():
    with pytest.raises(sf.OutOfMemory, match="out of memory: an allocation inside a sparseflow "
                                             "call failed") as info:
        sf._C._raise_bad_alloc()
    assert isinstance(info.value, MemoryError) and info.value.code == "out of memory"


def test_a_corrupted_sft_descriptor_raises_the_parse_error(tmp_path):
    path = tmp_path / "w.sft"
    sf.write(str(path), sf.from_numpy(np.eye(3, dtype=np.float32)))
    data = bytearray(path.read_bytes())
    at = data.index(b"format: ")
    data[at + 8 : at + 10] = b"\xff\x1b"
    path.write_bytes(bytes(data))
    with pytest.raises(sf.ParseError, match="checksum mismatch"):
        sf.read(str(path))
    # Past the checksum, the descriptor's bytes reach the format parser's message: escaped.
    with pytest.raises(sf.InvalidArgument) as info:
        sf.read(str(path), verify_checksum=False)
    assert str(path) in str(info.value) and "\\xff\\x1b" in str(info.value)
