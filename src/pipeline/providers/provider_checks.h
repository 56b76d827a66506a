// Checks the hand-tuned providers share: formats and dtypes of a contraction's operands, and the
// epilogue's text.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/contraction.h"

namespace sparseflow::pipeline {

/// nullopt when each listed operand is in its format, the output and the bias are dense, and
/// every tensor of the contraction is `dtype`; else why not ("W is bsr:4x4, not 2:4").
std::optional<std::string> requireFormats(
    const Contraction& c,
    const std::vector<std::pair<const ContractionOperand*, const char*>>& want, DType dtype);

/// The fused epilogue as Epilogue::toString() spells it ("bias+relu", "none"), or with a scale or a
/// residual as its formula ("relu((alpha) * P + b(j)) + R(i,j)").
std::string epilogueText(const Contraction& c);

}  // namespace sparseflow::pipeline
