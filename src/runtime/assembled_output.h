// Running a kernel that assembles its sparse output (lower/assembly.h): the symbolic phase counts
// entries per row into pos, the counts are summed and the coordinate and value arrays allocated,
// then the numeric phase fills them.
#pragma once

#include "lower/lower.h"
#include "runtime/kernel_args.h"
#include "sparseflow/runtime_abi.h"
#include "sparseflow/tensor.h"

namespace sparseflow::runtime {

/// The assembled output for the bound inputs. Throws kOutOfRange (naming the output and the
/// count) when the entries do not fit the format's index width.
Tensor runAssembling(const lower::LoweredKernel& lowered, const BoundInputs& bound,
                     const KernelEntry& symbolic, const KernelEntry& numeric,
                     const std::string& kernelText);

}  // namespace sparseflow::runtime
