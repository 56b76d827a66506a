// Which loops of the IR walk the coordinates of a sparse level: their variable indexes an integer
// array (crd, pos), so the values they reach are scattered. GCC vectorizes such a loop with
// gathers (AVX-512) when its body is small enough, e.g. a CSR row loop around a completely
// unrolled 16-wide row of B, or an SpMV row sum; measured 1.4-5x slower than the scalar loop with
// the inner dense loop vectorized. The C++ emitter keeps them scalar.
#pragma once

#include "ir/ir.h"

namespace sparseflow::codegen {

/// True when `loop`'s variable (directly or through lets of its body) indexes a load of an
/// integer array in the body.
bool walksCoordinates(const ir::For& loop);

}  // namespace sparseflow::codegen
