// `sparseflow opt --stage STAGE [IN] [-o OUT]`: one pipeline stage on text, the way stage tests
// (tests/lit) drive the compiler. `lower` reads a kernel in index notation (with --format and
// --dtype) and writes the lowered kernel's text; `schedule` (with --schedule), `default-transforms`
// and `codegen` read that text (lower/lowered_text.h) and write the next stage's text, or C++.
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

const char* const kOptStages = "lower, schedule, default-transforms, codegen";

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

std::string lowerText(const OptArgs& args, const std::string& text) {
  KernelOptions options;
  options.formats = assignments("--format", args.formats);
  for (const auto& [name, dtype] : assignments("--dtype", args.dtypes))
    options.dtypes[name] = parseDType(dtype);
  options.schedule = Schedule::parse(args.schedule);
  const pipeline::CheckedStage checked =
      pipeline::checkStage(expr::parse(kernelText(text)), options);
  if (checked.decomposition) {
    throw Error(ErrorCode::kNotSupported,
                "the kernel runs as parts (a hyb operand or decompose()): lower each part's "
                "formats on its own");
  }
  return lower::printKernel(pipeline::lowerStage(checked));
}

int runOpt(const OptArgs& args) {
  const std::string source = args.input == "-" ? "<stdin>" : args.input;
  const std::string text = readTextFile(args.input);
  std::string out;
  if (args.stage == "lower") {
    out = lowerText(args, text);
  } else {
    if (!args.formats.empty() || !args.dtypes.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--format and --dtype are for --stage lower (a lowered kernel states its own)");
    }
    lower::LoweredKernel kernel = lower::parseKernel(text, source);
    if (args.stage == "schedule") {
      out = lower::printKernel(
          pipeline::scheduleStage(std::move(kernel), Schedule::parse(args.schedule)));
    } else if (!args.schedule.empty()) {
      throw Error(ErrorCode::kInvalidArgument, "--schedule is for --stage schedule or lower");
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
      "Run one compiler stage on text: a kernel to its lowered IR, or lowered IR through "
      "schedule, default-transforms or codegen (tests/lit)");
  auto args = std::make_shared<OptArgs>();
  cmd->add_option("--stage", args->stage, std::string("the stage: ") + kOptStages)->required();
  cmd->add_option("input", args->input, "input file (default '-': the standard input)");
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout");
  cmd->add_option("--schedule", args->schedule, "schedule text (--stage schedule, lower)");
  // One value per flag (repeat it), so that a file name after them stays the input.
  cmd->add_option("--format", args->formats, "NAME=FORMAT (--stage lower; repeat for each)")
      ->allow_extra_args(false);
  cmd->add_option("--dtype", args->dtypes, "NAME=DTYPE (--stage lower; f32 or f64)")
      ->allow_extra_args(false);
  cmd->callback([&action, args] { action = [args] { return runOpt(*args); }; });
}

}  // namespace sparseflow::tools
