// NumPy .npy reader and writer (format versions 1.0, 2.0 and 3.0; numeric and bool dtypes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"

namespace sparseflow::io {

/// The contents of a .npy file: a dense array in row-major (C) order, little-endian.
struct NpyArray {
  /// Dimensions; empty for a 0-d array (one element).
  std::vector<int64_t> shape;
  /// Element type: "f32", "f64", "f16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" or
  /// "bool" (numpy '<f4', '<f8', '<f2', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8',
  /// '|b1').
  std::string dtype;
  /// prod(shape) elements of npyItemSize(dtype) bytes each, row-major, little-endian. A bool is one
  /// byte, 0 or 1.
  std::vector<uint8_t> bytes;
};

/// Bytes per element of a dtype name above; throws Error(kInvalidArgument) for any other name.
int64_t npyItemSize(std::string_view dtype);

/// Parses the bytes of a .npy file. Big-endian arrays ('>f4') are byte-swapped and Fortran-order
/// arrays transposed, so the result is always little-endian row-major; bools are normalized to 0/1.
/// Errors name `name` and the byte offset at fault: kParseError for a bad magic string, a malformed
/// header dict, a shape whose size overflows, or data shorter or longer than the shape needs
/// (checked before allocating); kNotSupported for other versions and dtypes (complex, strings,
/// objects, structured arrays).
NpyArray parseNpy(std::string_view data, const std::string& name);

/// Reads the file at `path` with parseNpy (errors name the path); kIoError if unreadable.
NpyArray readNpy(const std::string& path);

/// A dense RawTensor with every element converted to double (int64 values beyond 2^53 round).
RawTensor toRawTensor(const NpyArray& array);

/// The bytes of a .npy file holding `array` as numpy writes it: version 1.0 (2.0 only if the header
/// needs more than 65535 bytes), C order, the header dict padded with spaces and a newline so that
/// the data starts at a multiple of 64 bytes. Throws Error(kInvalidArgument) when the array is
/// inconsistent (unknown dtype, negative dimension, byte count not prod(shape) * item size).
std::string formatNpy(const NpyArray& array);

/// Writes formatNpy(array) to `path` atomically; kIoError if it cannot.
void writeNpy(const std::string& path, const NpyArray& array);

}  // namespace sparseflow::io
