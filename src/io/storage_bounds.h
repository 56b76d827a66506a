// Sizes that a file's header declares, checked against what the file can back before anything is
// allocated or trusted: the positions a stored tensor's levels hold (with overflow checks), and
// the memory a format built from a file's entries would need beyond those entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sparseflow/tensor.h"

namespace sparseflow::io {

/// The number of values the levels of `format` (not a hybrid: one part) hold for `shape` with the
/// stored arrays `levels` (compressed levels count their children from pos), computed with
/// overflow checks. Throws kParseError "WHERE: shape [..] in format F declares more than 2^63
/// positions" when a product of extents would wrap around (a dense 2^32 x 2^32 tensor would
/// otherwise need 0 values).
int64_t storedPositions(const Format& format, const std::vector<int64_t>& shape,
                        const std::vector<LevelStorage>& levels, const std::string& where);

/// Bytes that a tensor of `format` and `shape` holding at most `entries` entries of `dtype` would
/// take (pos, crd and meta arrays and values; hybrid parts summed), saturating at INT64_MAX. The
/// part that grows with the shape rather than the entries (csr's row pointers, dense and blocked
/// fill) is what a lying header can blow up.
int64_t estimatedStorageBytes(const Format& format, const std::vector<int64_t>& shape,
                              int64_t entries, DType dtype);

/// The default bound on what reading a file may allocate for its tensor: 256 MiB, or 16 times the
/// file's size when that is more (a text entry of a few bytes becomes at most ~16 bytes of csr).
int64_t defaultStorageLimit(uint64_t fileBytes);

/// A shape as the file errors write it: "[2, 3]".
std::string shapeText(const std::vector<int64_t>& shape);

}  // namespace sparseflow::io
