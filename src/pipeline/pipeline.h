// The compiler pipeline: the stages from kernel text to an executable, in order, each a function
// from one typed value to the next (pipeline.cpp lists them in one function). Every stage prints
// (--print-after-all), the pipeline can stop after any (--stop-after) and time them
// (SPARSEFLOW_TIME_PASSES=1).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "expr/expr.h"
#include "lower/lower.h"
#include "pipeline/contraction.h"
#include "pipeline/executable.h"
#include "runtime/format_decomposition.h"
#include "sparseflow/format.h"
#include "sparseflow/kernel.h"

namespace sparseflow::pipeline {

enum class Stage {
  kParse,              ///< text → expr::Statement
  kCheck,              ///< → CheckedKernel with the bound formats (and the format decomposition)
  kCanonicalize,       ///< → the kernel as a contraction with an epilogue, when it is one
  kLower,              ///< → loop IR (driver planning, co-iteration, assembly)
  kSchedule,           ///< → loop IR with the user's schedule applied
  kDefaultTransforms,  ///< → loop IR with split accumulators and extent versioning
  kSelectProvider,     ///< → the first provider that accepts (generated code last)
  kCodegen,            ///< → C++ (generated code only)
  kJit,                ///< → a loaded library and the executable
};
inline constexpr Stage kLastStage = Stage::kJit;

/// "parse", "check", ..., "select-provider", "codegen", "jit".
const char* stageName(Stage stage);
/// The stage a name denotes; an error listing the names when none.
Stage stageFromName(std::string_view name);

/// Everything the stages made, as Kernel keeps it.
struct CompiledKernel {
  std::string text;
  expr::Statement statement;
  expr::CheckedKernel checked;
  std::map<std::string, Format> formats;
  std::optional<Contraction> contraction;
  std::string notContraction;
  lower::LoweredKernel lowered;  ///< the loop IR as compiled (after the default transforms)
  std::string ir;                ///< that IR printed
  std::string source;            ///< generated C++ or the hand-tuned kernel's comment
  std::string provider;          ///< the provider that runs it
  std::vector<std::pair<std::string, std::string>> declined;  ///< earlier providers and why
  std::shared_ptr<const Executable> executable;  ///< null when the pipeline stopped early
  Stage last = Stage::kParse;                    ///< the last stage that ran
  std::optional<runtime::Decomposition> decomposition;
  std::vector<std::shared_ptr<const CompiledKernel>> parts;  ///< one per part, when decomposed
  std::string log;  ///< --print-after-all's text: each stage's output under its header
};

/// Runs the pipeline on `text` (KernelOptions::stopAfter, printAfterAll).
CompiledKernel compile(const std::string& text, const KernelOptions& options);

}  // namespace sparseflow::pipeline
