// `sparseflow opt --stage STAGE [IN] [-o OUT]`: one pipeline stage on text, the way stage tests
// (tests/lit) drive the compiler. `parse` reads a kernel in index notation; `check`,
// `canonicalize`, `lower` and `select-provider` read a kernel (with --format, --dtype and
// --schedule) or the checked stage's text (pipeline/stage_text.h; select-provider also a canonical
// `contraction:` line); `schedule` (with --schedule), `default-transforms` and `codegen` read the
// lowered kernel's text (lower/lowered_text.h). Each writes its stage's text, or C++.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/c/emit_cpp.h"
#include "expr/expr.h"
#include "ir/verify.h"
#include "lower/lowered_text.h"
#include "pipeline/stage_text.h"
#include "pipeline/stages.h"
#include "sparseflow/assignments.h"
#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/text_file.h"

namespace sparseflow::tools {
namespace {

struct OptArgs {
  std::string stage, input = "-", output, schedule;
  std::vector<std::string> formats, dtypes;
};

const char* const kOptStages =
    "parse, check, canonicalize, lower, select-provider, schedule, default-transforms, codegen";

/// The kernel text of a `lower` input: its lines without `#` comments.
std::string kernelText(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') out += (out.empty() ? "" : "\n") + line;
    start = end + 1;
  }
  return out;
}

bool hasKernelFlags(const OptArgs& args) {
  return !args.formats.empty() || !args.dtypes.empty() || !args.schedule.empty();
}

/// The checked kernel of a stage before lowering: the checked stage's text as it states it, or a
/// kernel in index notation checked with --format, --dtype and --schedule.
pipeline::CheckedStage checkedInput(const OptArgs& args, const std::string& text,
                                    const std::string& source) {
  if (pipeline::isCheckedText(text)) {
    if (hasKernelFlags(args)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format, --dtype and --schedule are for a kernel in index notation; " + source +
                      " is a checked kernel, which states its formats, dtypes and "
                      "schedule");
    }
    return pipeline::parseChecked(text, source, KernelOptions{});
  }
  KernelOptions options;
  options.formats = assignments("--format", args.formats);
  for (const auto& [name, dtype] : assignments("--dtype", args.dtypes))
    options.dtypes[name] = parseDType(dtype);
  options.schedule = Schedule::parse(args.schedule);
  return pipeline::checkStage(expr::parse(kernelText(text)), options);
}

void refuseParts(const pipeline::CheckedStage& checked, const std::string& stage) {
  if (checked.decomposition) {
    throw Error(ErrorCode::kNotSupported,
                "the kernel runs as parts (a hyb operand or decompose()): run --stage " + stage +
                    " on each part's formats on its own");
  }
}

/// The stages before lowering, and lowering itself: their input is a kernel or checked text.
std::string frontStage(const OptArgs& args, const std::string& text, const std::string& source) {
  if (args.stage == "parse") {
    if (hasKernelFlags(args))
      throw Error(ErrorCode::kInvalidArgument,
                  "--stage parse takes no --format, --dtype or "
                  "--schedule (check applies them)");
    return expr::toString(expr::parse(kernelText(text))) + "\n";
  }
  if (args.stage == "select-provider") {
    const bool canonical = kernelText(text).rfind("contraction:", 0) == 0;
    if (canonical && hasKernelFlags(args)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format, --dtype and --schedule are for a kernel in index notation; " + source +
                      " is a canonical contraction, which states its operands");
    }
    const pipeline::CheckedStage checked =
        canonical ? pipeline::checkedFromCanonical(text, source, KernelOptions{})
                  : checkedInput(args, text, source);
    refuseParts(checked, args.stage);
    return pipeline::printSelection(pipeline::selectProviderStage(
        checked, pipeline::canonicalizeStage(checked), KernelOptions{}));
  }
  const pipeline::CheckedStage checked = checkedInput(args, text, source);
  if (args.stage == "check") return pipeline::printChecked(checked);
  if (args.stage == "canonicalize")
    return pipeline::printCanonical(pipeline::canonicalizeStage(checked));
  refuseParts(checked, args.stage);
  return lower::printKernel(pipeline::lowerStage(checked));
}

int runOpt(const OptArgs& args) {
  const std::string source = args.input == "-" ? "<stdin>" : args.input;
  const std::string text = readTextFile(args.input);
  std::string out;
  if (args.stage == "parse" || args.stage == "check" || args.stage == "canonicalize" ||
      args.stage == "lower" || args.stage == "select-provider") {
    out = frontStage(args, text, source);
  } else {
    if (!args.formats.empty() || !args.dtypes.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format and --dtype are for the stages up to lower (a lowered kernel states "
                  "its own)");
    }
    lower::LoweredKernel kernel = lower::parseKernel(text, source);
    if (args.stage == "schedule") {
      out = lower::printKernel(
          pipeline::scheduleStage(std::move(kernel), Schedule::parse(args.schedule)));
    } else if (!args.schedule.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--schedule is for --stage schedule or the stages up to lower");
    } else if (args.stage == "default-transforms") {
      out = lower::printKernel(pipeline::defaultTransformsStage(std::move(kernel)));
    } else if (args.stage == "codegen") {
      // Text written by hand may break the scoping rules code generation relies on: a user error
      // here, not the emitter's internal check.
      const std::set<std::string> external = codegen::entryPointNames(kernel);
      for (const ir::Stmt& phase : {kernel.symbolic, kernel.body}) {
        if (!phase) continue;
        const std::string problem = ir::verifyScopes(phase, external);
        if (!problem.empty()) throw Error(ErrorCode::kInvalidArgument, source + ": " + problem);
      }
      out = codegen::emitCpp(kernel);
    } else {
      throw Error(ErrorCode::kInvalidArgument,
                  "--stage '" + args.stage + "': expected one of " + kOptStages);
    }
  }
  if (args.output.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    writeTextFile(args.output, out);
  }
  return 0;
}

}  // namespace

void addOptCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "opt",
      "Run one compiler stage on text: a kernel through parse, check, canonicalize, lower or "
      "select-provider, or lowered IR through schedule, default-transforms or codegen "
      "(tests/lit)");
  auto args = std::make_shared<OptArgs>();
  cmd->add_option("--stage", args->stage, std::string("the stage: ") + kOptStages)->required();
  cmd->add_option("input", args->input, "input file (default '-': the standard input)");
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout");
  cmd->add_option("--schedule", args->schedule,
                  "schedule text (--stage schedule, and a kernel's up to lower)");
  // One value per flag (repeat it), so that a file name after them stays the input.
  cmd->add_option("--format", args->formats,
                  "NAME=FORMAT (a kernel's, up to lower; repeat for each)")
      ->allow_extra_args(false);
  cmd->add_option("--dtype", args->dtypes, "NAME=DTYPE (a kernel's, up to lower; f32 or f64)")
      ->allow_extra_args(false);
  cmd->callback([&action, args] { action = [args] { return runOpt(*args); }; });
}

}  // namespace sparseflow::tools
