// Textual MLIR export (LLVM/MLIR 16 syntax): a checked kernel and the formats of its tensors become
// one `func.func` of `linalg.generic` ops over tensors, sparse ones typed with
// `#sparse_tensor.encoding`, for interop with MLIR's sparsifier (`mlir-opt-16 --sparse-compiler`).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "expr/expr.h"
#include "sparseflow/format.h"

namespace sparseflow::codegen {

/// A shape entry or index extent with this value prints as a dynamic size (`?`): Kernel::mlir()
/// exports shape-generic code this way, since a compiled Kernel fixes no shapes.
inline constexpr int64_t kDynamicExtent = -1;

/// Exports `kernel` as an MLIR 16 module holding `func.func @kernel`. Arguments: the inputs in
/// order of first appearance, then (for `+=`) the output's current value, then the scalar
/// parameters as f32/f64; the result is the output. Tensors absent from `formats` are dense
/// row-major. Reductions nested under other operations and sums of reducing terms become several
/// `linalg.generic` ops joined by `tensor.empty` temporaries; sparse inputs that the sparsifier
/// cannot iterate (not a multiplicative factor, or under `max`) are converted to dense first, as
/// the C++ lowering does. Throws kNotSupported naming the tensor and format for formats MLIR 16
/// cannot express: blocked levels (bsr), ragged, fixed (ell), n:m and hybrid formats.
std::string emitMlir(const expr::CheckedKernel& kernel,
                     const std::map<std::string, Format>& formats);

}  // namespace sparseflow::codegen
