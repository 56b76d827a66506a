// The stages of the pipeline as functions from one typed value to the next (pipeline.cpp runs them
// in order), and each stage's text form.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expr/expr.h"
#include "lower/lower.h"
#include "pipeline/contraction.h"
#include "pipeline/executable.h"
#include "pipeline/provider.h"
#include "runtime/format_decomposition.h"
#include "schedule/schedule.h"
#include "sparseflow/kernel.h"

namespace sparseflow::pipeline {

/// The checked kernel with its bound formats and parsed schedule.
struct CheckedStage {
  expr::CheckedKernel checked;
  schedule::Schedule schedule;
  lower::LowerOptions lowerOptions;  ///< formats, parallel, the schedule's stage-I directives
  std::optional<runtime::Decomposition> decomposition;
};
/// `indexCopies`: the index copies of a kernel checked before (expr::check), read from its text.
CheckedStage checkStage(const expr::Statement& statement, const KernelOptions& options,
                        const std::map<std::string, std::string>& indexCopies = {});
/// The statement with its reductions written out, then one line per tensor (`tensor A: csr f32`,
/// the output as `output C: dense f32`), per index copy of a written-out row function
/// (`index j_2: copy of j`) and the schedule (`schedule: ...`); stage_text.h reads it back.
std::string printChecked(const CheckedStage& checked);

struct CanonicalStage {
  std::optional<Contraction> contraction;
  std::string notContraction;  ///< why not, when it is not
};
CanonicalStage canonicalizeStage(const CheckedStage& checked);
std::string printCanonical(const CanonicalStage& canonical);

lower::LoweredKernel lowerStage(const CheckedStage& checked);
/// The stages after lowering read only the lowered kernel (and the schedule): they run on its text
/// form too (lower/lowered_text.h, `sparseflow opt`).
lower::LoweredKernel scheduleStage(lower::LoweredKernel lowered, const schedule::Schedule& sched);
lower::LoweredKernel defaultTransformsStage(lower::LoweredKernel lowered);
/// The loop IR printed (both phases of an assembling kernel): Kernel::ir().
std::string printLowered(const lower::LoweredKernel& lowered);

struct Selection {
  const Provider* provider = nullptr;
  Offer offer;
  std::vector<std::pair<std::string, std::string>> declined;  ///< provider name, why
};
Selection selectProviderStage(const CheckedStage& checked, const CanonicalStage& canonical,
                              const KernelOptions& options);
std::string printSelection(const Selection& selection);

/// The C++ of generated code (the GPU-bound loops refused here: this build has no CUDA backend).
std::string codegenStage(const lower::LoweredKernel& lowered, const Schedule& userSchedule);

}  // namespace sparseflow::pipeline
