// A guard against allocations the machine cannot hold: a clear error instead of the OOM killer.
#pragma once

#include <cstdint>

namespace sparseflow {

/// Throws kOutOfMemory naming `what` when `bytes` exceeds 3/4 of the machine's physical memory
/// (Linux overcommits, so a too-large allocation would otherwise kill the process on first touch).
void checkAllocation(int64_t bytes, const char* what);

}  // namespace sparseflow
