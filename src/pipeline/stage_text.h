// The text forms of the stages before lowering, read back (stages.h prints them): the checked
// kernel and the canonical form. `sparseflow opt` runs a stage on them and tests/lit compares them;
// printChecked(parseChecked(printChecked(c))) is printChecked(c), and the kernel is the same
// (expr::sameStatement, the same formats, dtypes, index copies and schedule).
#pragma once

#include <string>

#include "pipeline/stages.h"

namespace sparseflow::pipeline {

/// Whether `text` is a checked kernel's text (it has `tensor`, `output`, `index` or `schedule`
/// lines) rather than a kernel in index notation.
bool isCheckedText(const std::string& text);

/// Reads printChecked's text:
///   C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))     (the statement, one line)
///   tensor A: csr f32                                 (one line per input: format and dtype)
///   output C: dense f32
///   index j_2: copy of j                              (row functions written out)
///   schedule: split(i, i0, i1, 64)
/// and checks the kernel again; `#` lines are comments. `options` gives what the text does not
/// (parallel, hand-tuned kernels...). Errors throw kInvalidArgument naming `source` and the line.
CheckedStage parseChecked(const std::string& text, const std::string& source,
                          const KernelOptions& options);

/// Reads printCanonical's text of a contraction,
///   contraction: C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))  [A csr f32, B dense f32, ...]
/// into the kernel it states, checked (no schedule: a scheduled kernel is not canonicalized for the
/// providers); canonicalizeStage of the result gives the contraction back.
CheckedStage checkedFromCanonical(const std::string& text, const std::string& source,
                                  const KernelOptions& options);
/// The canonical form the text states (checkedFromCanonical, canonicalized); refuses a kernel that
/// is not a contraction.
CanonicalStage parseCanonical(const std::string& text, const std::string& source,
                              const KernelOptions& options);

}  // namespace sparseflow::pipeline
