// `sparseflow run KERNEL --in A=a.mtx ... --out y=y.npy` and `sparseflow compile KERNEL --emit
// cpp|ir|mlir`: compile a kernel in index notation, run it on tensor files, or print what it
// became.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "sparseflow/assignments.h"
#include "sparseflow/commands.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"
#include "sparseflow/process.h"
#include "sparseflow/text_file.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {

namespace {

struct KernelArgs {
  std::string kernel;
  std::vector<std::string> formats, dtypes, inputs, outputs, params, prints;
  std::string emit, output, schedule, stopAfter;
  bool noRun = false, noCache = false, serial = false, generatedOnly = false, printAfterAll = false;
  bool printSource = false, printIr = false, emitMlir = false;
  int repeat = 0;
};

[[noreturn]] void fail(const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

/// The name of the kernel's output, as the parser reads it (a malformed kernel gives its parse
/// error with line and column here, before any file is opened).
std::string outputName(const std::string& kernel) {
  return expr::parse(kernel).lhs.tensor;
}

KernelOptions kernelOptions(const KernelArgs& args) {
  KernelOptions options;
  options.formats = assignments("--format", args.formats, "FORMAT");
  for (const auto& [name, text] : assignments("--dtype", args.dtypes, "DTYPE")) {
    try {
      options.dtypes[name] = parseDType(text);
    } catch (const Error& e) {
      fail("--dtype " + name + "=" + text + ": " + e.what());
    }
  }
  options.useCache = !args.noCache;
  options.handTuned = !args.generatedOnly;
  options.parallel = !args.serial;
  options.schedule = args.schedule;
  options.stopAfter = args.stopAfter;
  options.printAfterAll = args.printAfterAll;
  return options;
}

/// The last pipeline stage `--emit WHAT` needs: printing never needs the C++ compiler (the JIT).
std::string stageFor(const std::string& what) {
  if (what == "mlir") return "check";
  if (what == "ir") return "default-transforms";
  if (what == "source" || what == "cpp") return "codegen";
  return "";  // plan: describe() says how the kernel runs, which the JIT's cache use is part of
}

Kernel compileKernel(const KernelArgs& args, const KernelOptions& options) {
  try {
    return Kernel::compile(args.kernel, options);
  } catch (const Error& e) {
    std::string given;
    for (const std::string& f : args.formats) given += " --format " + f;
    for (const std::string& d : args.dtypes) given += " --dtype " + d;
    throw Error(e.code(),
                std::string(e.what()) + (given.empty() ? "" : "\n  (given:" + given + ")"));
  }
}

/// What `--print`/`--emit WHAT` prints of the kernel (with checkOnly, only whether WHAT is known).
std::string printed(const Kernel& kernel, const std::string& what, bool checkOnly = false) {
  const bool known =
      what == "source" || what == "cpp" || what == "ir" || what == "mlir" || what == "plan";
  if (checkOnly && known) return "";
  if (what == "source" || what == "cpp") return kernel.source();
  if (what == "ir") return kernel.ir();
  if (what == "mlir") return kernel.mlir();
  if (what == "plan") return kernel.describe();
  fail("--print/--emit '" + what + "': expected source (cpp), ir, mlir or plan");
}

int runKernel(KernelArgs args) {
  if (args.printSource) args.prints.push_back("source");
  if (args.printIr) args.prints.push_back("ir");
  if (args.emitMlir) args.prints.push_back("mlir");
  if (args.repeat < 0) fail("--repeat " + std::to_string(args.repeat) + ": expected a count >= 0");
  for (const std::string& p : args.prints) {
    if (p != "source" && p != "cpp" && p != "ir" && p != "mlir" && p != "plan") {
      fail("--print '" + p + "': expected source, ir, mlir or plan");
    }
  }
  const KernelOptions options = kernelOptions(args);
  const auto inputs = assignments("--in", args.inputs, "FILE");
  const auto outputs = assignments("--out", args.outputs, "FILE");
  std::map<std::string, double> params;
  for (const auto& [name, text] : assignments("--param", args.params, "VALUE")) {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size())
      fail("--param " + name + "=" + text + ": '" + text + "' is not a number");
    params[name] = value;
  }
  const std::string out = outputName(args.kernel);
  for (const auto& [name, path] : outputs) {
    if (name != out)
      fail("--out " + name + "=" + path + ": '" + name + "' is not the kernel's output '" + out +
           "'");
    if (fileKindFromPath(path) == FileKind::kAuto) {
      fail("--out " + name + "=" + path +
           ": unknown file kind; use .npy, .mtx, .tns, .smtx or .sft");
    }
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      fail("--out " + name + "=" + path + ": directory '" + parent.string() + "' does not exist");
    }
  }
  for (const auto& [name, path] : inputs) {
    if (name == out)
      fail("--in " + name + "=" + path + ": '" + name + "' is the kernel's output; use --out");
  }
  // Inputs first, in the value type asked for: an operand read from a sparse file (a Matrix
  // Market coordinate matrix, FROSTT, DLMC, a sparse .sft) without --format keeps the file's
  // format (csr for a matrix), as `sparseflow tune`'s default configuration does; computing it
  // densely is --format NAME=dense.
  KernelOptions compiled = options;
  std::map<std::string, Tensor> tensors;
  std::vector<std::string> fromFiles;
  for (const auto& [name, path] : inputs) {
    ReadOptions read;
    auto dtype = options.dtypes.find(name);
    if (dtype != options.dtypes.end()) read.dtype = dtype->second;
    Tensor t;
    try {
      t = sparseflow::read(path, read);
    } catch (const Error& e) {
      throw Error(e.code(), "--in " + name + "=" + path + ": " + e.what());
    }
    auto format = options.formats.find(name);
    if (format != options.formats.end()) {
      try {
        t = convert(t, format->second);
      } catch (const Error& e) {
        throw Error(e.code(), "--format " + name + "=" + format->second + " for --in " + name +
                                  "=" + path + ": " + e.what());
      }
    } else if (!t.format().isDenseRowMajor()) {
      compiled.formats[name] = t.format().toString();
      fromFiles.push_back(name + ": " + t.format().toString() + ", the format read from " + path +
                          " (--format " + name + "=dense to compute it densely)");
    }
    tensors.emplace(name, std::move(t));
  }
  const Kernel kernel = compileKernel(args, compiled);
  for (const std::string& note : fromFiles) std::printf("format of %s\n", note.c_str());
  if (args.printAfterAll) std::fputs(kernel.passLog().c_str(), stdout);
  for (const std::string& p : args.prints) std::fputs(printed(kernel, p).c_str(), stdout);
  if (args.noRun) return 0;

  std::map<std::string, const Tensor*> bound;
  std::string given;
  for (const auto& [name, t] : tensors) {
    bound[name] = &t;
    given += " --in " + name + "=" + inputs.at(name);
  }
  Tensor result;
  const auto start = std::chrono::steady_clock::now();
  try {
    result = kernel.run(bound, params);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) +
                              "\n  (given:" + (given.empty() ? " no --in" : given) +
                              "; inputs are --in NAME=FILE, scalars --param NAME=VALUE)");
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fputs(kernel.describe().c_str(), stdout);
  std::printf("ran in %.3f ms: %s\n", ms, result.summary().c_str());
  if (args.repeat > 0) {  // kernel time only: inputs are bound already, no I/O in the loop
    // An `=` kernel runs into the first run's output (no allocation per call, as a caller that
    // keeps its output does); a `+=` kernel gets a fresh one each time, so the file written is
    // one run's result.
    const bool accumulates = expr::parse(args.kernel).accumulate;
    std::vector<double> times;
    for (int r = 0; r < args.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      if (accumulates) {
        result = kernel.run(bound, params);
      } else {
        kernel.run(bound, result, params);
      }
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    const double median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    std::printf("median_ms: %.6f\n", median);
  }
  for (const auto& [name, path] : outputs) {
    write(path, result);
    std::printf("wrote %s: %s\n", path.c_str(), result.summary().c_str());
  }
  return 0;
}

int compileOnly(const KernelArgs& args) {
  if (args.emit.empty() && !args.printAfterAll) fail("--emit: expected cpp, ir, mlir or plan");
  KernelOptions options = kernelOptions(args);
  if (options.stopAfter.empty() && !args.emit.empty()) options.stopAfter = stageFor(args.emit);
  if (!args.emit.empty()) printed(Kernel(), args.emit, /*checkOnly=*/true);
  const Kernel kernel = compileKernel(args, options);
  if (args.printAfterAll) std::fputs(kernel.passLog().c_str(), stdout);
  if (args.emit.empty()) return 0;
  const std::string text = printed(kernel, args.emit);
  if (args.output.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    writeTextFile(args.output, text);
    std::fprintf(stderr, "wrote %s\n", args.output.c_str());
  }
  return 0;
}

void addKernelOptions(CLI::App* cmd, KernelArgs& args) {
  cmd->add_option("KERNEL", args.kernel, "kernel in index notation, e.g. \"y(i) = A(i,j) * x(j)\"")
      ->required();
  cmd->add_option("--format", args.formats,
                  "NAME=FORMAT (csr, csc, coo, dcsr, csf, bsr:RxC, 2:4, ...)");
  cmd->add_option("--dtype", args.dtypes, "NAME=DTYPE (f32 or f64; default f32)");
  cmd->add_flag("--no-cache", args.noCache, "do not use the on-disk kernel cache");
  cmd->add_flag("--generated-only", args.generatedOnly,
                "run generated code even where a hand-tuned kernel matches (to compare)");
  cmd->add_flag("--serial", args.serial, "generate single-threaded code");
  cmd->add_option("--schedule", args.schedule,
                  "schedule text, e.g. \"split(i, i0, i1, 64); parallel(i0)\" (docs/compiler.md)");
  cmd->add_flag("--print-after-all", args.printAfterAll,
                "print each pipeline stage's output under '// ----- after STAGE -----'");
  cmd->add_option("--stop-after", args.stopAfter,
                  "stop the pipeline after STAGE (parse, check, canonicalize, lower, schedule, "
                  "default-transforms, select-provider, codegen, jit)");
}

}  // namespace

void addRunCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("run", "Compile a kernel and run it on tensor files");
  auto args = std::make_shared<KernelArgs>();
  addKernelOptions(cmd, *args);
  cmd->add_option("--in", args->inputs,
                  "NAME=FILE: an input tensor (.mtx, .npy, .tns, .smtx, .sft, ...)");
  cmd->add_option("--out", args->outputs,
                  "NAME=FILE: where to write the output (.npy dense; .mtx, .sft, ...)");
  cmd->add_option("--param", args->params, "NAME=VALUE: a scalar parameter of the kernel");
  cmd->add_option("--print", args->prints, "print source, ir, mlir or plan before running");
  cmd->add_flag("--no-run", args->noRun, "only compile (and --print)");
  cmd->add_flag("--print-source", args->printSource, "print the generated C++ before running");
  cmd->add_flag("--print-ir", args->printIr, "print the scheduled loop IR before running");
  cmd->add_flag("--emit-mlir", args->emitMlir, "print the kernel as MLIR (linalg + sparse_tensor)");
  cmd->add_option(
      "--repeat", args->repeat,
      "run N more times after the first (warm-up) run and print 'median_ms: X' (kernel only)");
  cmd->callback([&action, args] { action = [args] { return runKernel(*args); }; });
}

void addCompileCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compile", "Compile a kernel and print its C++, loop IR or MLIR");
  auto args = std::make_shared<KernelArgs>();
  addKernelOptions(cmd, *args);
  cmd->add_option("--emit", args->emit,
                  "cpp, ir, mlir or plan (cpp, ir and mlir need no C++ compiler; required unless "
                  "--print-after-all)");
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout");
  cmd->callback([&action, args] { action = [args] { return compileOnly(*args); }; });
}

}  // namespace sparseflow::tools
