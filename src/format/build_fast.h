// Fast paths for the common formats (CSR, CSC, COO) that the generic level-by-level builder and
// extractor would serve too, only slower.
#pragma once

#include <optional>
#include <string>

#include "sparseflow/build.h"

namespace sparseflow::format {

/// Builds CSR/CSC-shaped formats ([dense dX, compressed dY], 2-d) with a parallel counting sort,
/// checking the coordinates on the way (errors as checkCooEntries's); nullopt, before any check,
/// for every other format and for sizes beyond the fast path (more than 2^32 rows; more than 2^31
/// entries for 32-bit positions).
std::optional<Tensor> buildFast(const Coo& coo, const Format& format, const BuildOptions& options);

/// Throws kOutOfRange naming the first entry whose coordinates lie outside the shape.
void checkCooEntries(const Coo& coo);

/// Appends the entries of CSR/CSC-shaped and COO tensors; false for every other format.
bool extractFast(const Tensor& tensor, Coo& out);

/// "(3, 5)": the coordinates of entry e, for messages.
std::string describeEntry(const Coo& coo, int64_t e);

/// Entries with equal coordinates summed (kSum) or refused (kReject); order is not kept.
Coo sumDuplicates(const Coo& coo, Duplicates duplicates);

}  // namespace sparseflow::format
