// A contraction's tensors as a hand-tuned provider reads them: each input looked up by name,
// checked against its indices (rank, one extent per index, errors naming tensor and index),
// converted to the format and dtype compiled for (a converted copy is kept while its source is
// unchanged), and the dense row-major output made or checked.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/contraction.h"
#include "pipeline/executable.h"
#include "runtime/conversion_cache.h"
#include "runtime/output_pool.h"

namespace sparseflow::pipeline {

class ContractionBinding {
 public:
  /// `kernelText` is parsed again so that a shape error is reported as expr::check words it (both
  /// tensors, the index, both extents and the place in the text).
  ContractionBinding(Contraction contraction, const std::string& kernelText);

  struct Bound {
    std::map<std::string, std::shared_ptr<const Tensor>> tensors;  ///< inputs, by name
    std::map<std::string, int64_t> extents;                        ///< by index name
    std::vector<int64_t> outputShape;
    double scale = 1;  ///< the product's scale for this call's parameters
    const Tensor& operator[](const std::string& name) const { return *tensors.at(name); }
    /// The product of the extents of `indices` (1 for none).
    int64_t product(const std::vector<std::string>& indices) const;
  };
  Bound bind(const Inputs& inputs, const Params& params) const;
  /// A dense output for `bound` that the caller overwrites whole: an earlier call's buffer when
  /// its caller has let go of it (runtime/output_pool.h), else new.
  Tensor makeOutput(const Bound& bound) const;
  /// Checks a caller's output: dense row-major, the output's dtype and the bound shape.
  void checkOutput(const Tensor& output, const Bound& bound) const;
  /// The residual's values for a call writing `output` (null without a residual): its own, or,
  /// when they share memory with the output (a caller passing R as the output too), a copy
  /// kept in `copy`, since the kernels read R where they have stored outputs already.
  const void* residualValues(const Bound& bound, const Tensor& output, Buffer& copy) const;
  /// The bias's values for such a call (null without a bias), copied in the same case.
  const void* biasValues(const Bound& bound, const Tensor& output, Buffer& copy) const;

  const Contraction& contraction() const { return c_; }
  const std::string& text() const { return statement_.text; }

 private:
  /// Operand `name`'s values, or a copy in `copy` when they share memory with `output`.
  const void* valuesApartFromOutput(const std::string& name, const Bound& bound,
                                    const Tensor& output, Buffer& copy) const;
  Contraction c_;
  expr::Statement statement_;
  std::string text_;
  runtime::ConversionCache conversions_;
  mutable runtime::OutputPool outputs_;
};

}  // namespace sparseflow::pipeline
