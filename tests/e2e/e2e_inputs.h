// Inputs for end-to-end kernel tests: every tensor a kernel text reads, both as float64 dense
// arrays (what the reference evaluator reads) and as Tensors in their bound formats (what the
// compiled kernel reads), and the comparison of a result with the reference.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "e2e/reference_eval.h"
#include "expr/expr.h"
#include "sparseflow/tensor.h"

namespace sparseflow::testing {

struct KernelInputs {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, DenseRef> dense;  ///< the values the tensors hold, as float64
  std::map<std::string, expr::TensorInfo> infos;
  std::map<std::string, const Tensor*> pointers() const;
};

/// The indices of every tensor the right-hand side of `text` reads.
std::map<std::string, std::vector<std::string>> inputIndices(const std::string& text);

/// True for formats that keep only n of every m along the last level (`2:4`, `1:4`...).
bool isNMFormat(const std::string& format);

/// Random values in [-1, 1): inputs without a format (dense) get every element, sparse ones each
/// element with probability `density`, n:m ones at most n of every m along the last dimension;
/// f32 values are rounded to f32 first, so the reference sees what the kernel reads.
KernelInputs randomInputs(const std::string& text,
                          const std::map<std::string, std::string>& formats,
                          const std::map<std::string, int64_t>& extents, double density,
                          const std::map<std::string, DType>& dtypes, std::mt19937_64& rng);

/// Tensors holding exactly `values` (shape and float64 values per tensor, rounded to the dtype),
/// in the bound formats (zeros are not entries of the sparse ones).
KernelInputs inputsFromValues(const std::map<std::string, DenseRef>& values,
                              const std::map<std::string, std::string>& formats,
                              const std::map<std::string, DType>& dtypes = {});

/// The float64 reference of `text` on `in` (see referenceEval for `options`).
std::vector<double> referenceOf(const std::string& text, const KernelInputs& in,
                                const std::map<std::string, double>& params = {},
                                const ReferenceOptions& options = {});

/// Compares `got` with `expected` element by element: NaN must be NaN, ±inf the same inf, finite
/// values within `tolerance` (absolute; relative to max(1, |expected|) when `relative`). Reports
/// the first few differences as test failures and returns how many elements differ.
int64_t countMismatches(const std::vector<double>& got, const std::vector<double>& expected,
                        double tolerance, bool relative = false);

/// `values` rounded to f32 (what an f32 output can hold: 2.7e43 is inf).
std::vector<double> roundedToF32(std::vector<double> values);

}  // namespace sparseflow::testing
