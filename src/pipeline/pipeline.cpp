// The pipeline, stage by stage (see pipeline.h): the one function that lists the stages in order.
#include "pipeline/pipeline.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jit/jit.h"
#include "lower/lowered_text.h"
#include "pipeline/parts_executable.h"
#include "pipeline/providers/generated_executable.h"
#include "pipeline/scale_guard_executable.h"
#include "pipeline/stages.h"
#include "support/check.h"

namespace sparseflow::pipeline {
namespace {

constexpr const char* kStageNames[] = {"parse",           "check",    "canonicalize",
                                       "lower",           "schedule", "default-transforms",
                                       "select-provider", "codegen",  "jit"};

bool timePassesRequested() {
  const char* value = std::getenv("SPARSEFLOW_TIME_PASSES");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

/// Runs the stages for one CompiledKernel: records what each printed (when asked), times them
/// (SPARSEFLOW_TIME_PASSES), and says when to stop.
class StageRunner {
 public:
  StageRunner(CompiledKernel& kernel, const KernelOptions& options)
      : kernel_(kernel),
        text_(kernel.text),
        print_(options.printAfterAll),
        stopAfter_(options.stopAfter.empty() ? kLastStage : stageFromName(options.stopAfter)),
        time_(timePassesRequested()) {}
  ~StageRunner() {
    if (!time_) return;
    std::fprintf(stderr, "sparseflow pass timing for '%s':\n", text_.c_str());
    for (const auto& [stage, ms] : times_) std::fprintf(stderr, "  %-20s %9.3f ms\n", stage, ms);
  }

  /// Runs `stage` (a callable returning its printed form) and returns whether to go on.
  template <class Fn>
  bool run(Stage stage, Fn&& fn) {
    const auto start = std::chrono::steady_clock::now();
    std::string printed = fn();
    if (time_) {
      times_.emplace_back(stageName(stage), std::chrono::duration<double, std::milli>(
                                                std::chrono::steady_clock::now() - start)
                                                .count());
    }
    kernel_.last = stage;
    if (print_) {
      kernel_.log += std::string("// ----- after ") + stageName(stage) + " -----\n" + printed;
      if (!printed.empty() && printed.back() != '\n') kernel_.log += "\n";
    }
    return stage != stopAfter_;
  }

 private:
  CompiledKernel& kernel_;  // may be moved from when the destructor runs: text_ is a copy
  std::string text_;
  bool print_;
  Stage stopAfter_;
  bool time_;
  std::vector<std::pair<const char*, double>> times_;
};

}  // namespace

const char* stageName(Stage stage) {
  return kStageNames[static_cast<int>(stage)];
}

Stage stageFromName(std::string_view name) {
  std::string known;
  for (int s = 0; s <= static_cast<int>(kLastStage); ++s) {
    if (name == kStageNames[s]) return static_cast<Stage>(s);
    known += std::string(s ? ", " : "") + kStageNames[s];
  }
  SF_FAIL(kInvalidArgument) << "unknown pipeline stage '" << name << "'; the stages are " << known;
}

CompiledKernel compile(const std::string& text, const KernelOptions& options) {
  CompiledKernel k;
  k.text = text;
  StageRunner stages(k, options);
  if (!stages.run(Stage::kParse, [&] {
        k.statement = expr::parse(text);
        return expr::toString(k.statement) + "\n";
      })) {
    return k;
  }
  CheckedStage checked;
  if (!stages.run(Stage::kCheck, [&] {
        checked = checkStage(k.statement, options);
        k.checked = checked.checked;
        k.formats = checked.lowerOptions.formats;
        return printChecked(checked);
      })) {
    return k;
  }
  if (checked.decomposition) return compileParts(std::move(k), *checked.decomposition, options);
  CanonicalStage canonical;
  if (!stages.run(Stage::kCanonicalize, [&] {
        canonical = canonicalizeStage(checked);
        k.contraction = canonical.contraction;
        k.notContraction = canonical.notContraction;
        return printCanonical(canonical);
      })) {
    return k;
  }
  lower::LoweredKernel lowered;
  // Kernel::ir() is the loop IR; the stage prints the whole lowered kernel, header included, as
  // `sparseflow opt` reads it back.
  auto keepIr = [&] {
    k.lowered = lowered;
    k.ir = printLowered(lowered);
    return lower::printKernel(lowered);
  };
  if (!stages.run(Stage::kLower, [&] {
        lowered = lowerStage(checked);
        return keepIr();
      })) {
    return k;
  }
  if (!stages.run(Stage::kSchedule, [&] {
        lowered = scheduleStage(std::move(lowered), checked.schedule);
        return keepIr();
      })) {
    return k;
  }
  if (!stages.run(Stage::kDefaultTransforms, [&] {
        lowered = defaultTransformsStage(std::move(lowered));
        return keepIr();
      })) {
    return k;
  }
  Selection selection;
  if (!stages.run(Stage::kSelectProvider, [&] {
        selection = selectProviderStage(checked, canonical, options);
        k.provider = selection.provider->name();
        k.declined = selection.declined;
        if (selection.offer.executable) {
          k.executable = selection.offer.executable;
          if (k.contraction && k.contraction->scaleParamInSum) {
            k.executable = std::make_shared<ScaleGuardExecutable>(
                k.executable, k.contraction->scaleParam, text, options);
          }
          k.source = k.executable->source();
        }
        return printSelection(selection);
      })) {
    return k;
  }
  const bool generate = selection.offer.generate;
  if (!stages.run(Stage::kCodegen, [&] {
        if (!generate)
          return "# skipped: the " + k.provider + " provider runs, no generated code\n";
        k.source = codegenStage(lowered, options.schedule);
        return k.source;
      })) {
    return k;
  }
  stages.run(Stage::kJit, [&]() -> std::string {
    if (!generate) return "# skipped: the " + k.provider + " provider runs\n";
    jit::CompilerOptions jitOptions = jit::defaultCompilerOptions();
    jitOptions.useCache = options.useCache;
    jit::CompileResult compiled = jit::compile(k.source, jitOptions);
    const std::string library = compiled.libraryPath.string();
    const bool fromCache = compiled.fromCache;
    k.executable =
        std::make_shared<GeneratedExecutable>(k.statement, lowered, std::move(compiled), k.source);
    return "library: " + library + (fromCache ? " (from cache)" : " (compiled now)") + "\n";
  });
  return k;
}

}  // namespace sparseflow::pipeline
