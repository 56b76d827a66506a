// The epilogue over an f32 span, dispatched to the best SIMD target (for kernels and tests).
#pragma once

#include <cstdint>

#include "sparseflow/epilogue.h"

namespace sparseflow::kernels {

/// y[i] = activation(y[i] + bias[i]) for i < count; bias may be null.
void applyEpilogueF32(Activation activation, float* y, const float* bias, int64_t count);

}  // namespace sparseflow::kernels
