// The subcommands of the `sparseflow` tool; each file registers one.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace sparseflow::tools {

/// A subcommand's action, run after parsing; returns the process exit status.
using Action = std::function<int()>;

void addInfoCommand(CLI::App& app, Action& action);
void addConvertCommand(CLI::App& app, Action& action);
void addSurveyCommand(CLI::App& app, Action& action);
void addRunCommand(CLI::App& app, Action& action);
void addCompileCommand(CLI::App& app, Action& action);
void addOptCommand(CLI::App& app, Action& action);        // tools/sparseflow/cmd_opt.cpp
void addTuneCommand(CLI::App& app, Action& action);       // tools/sparseflow/cmd_tune.cpp
void addBenchmarkCommand(CLI::App& app, Action& action);  // tools/benchmark/cmd_benchmark.cpp
void addAuditCommand(CLI::App& app, Action& action);
void addOptimizeCommand(CLI::App& app, Action& action);  // tools/sparseflow/cmd_optimize.cpp

}  // namespace sparseflow::tools
