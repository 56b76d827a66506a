// Finds the system C++ compiler, computes its identity for cache keys, and runs it without a shell.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sparseflow::jit::detail {

/// A compiler that was found: what to exec and what names it in a cache key.
struct ResolvedCompiler {
  /// The executable as found (kept as found, not canonicalized: clang++ and clang are one file
  /// that behaves by its name).
  std::string program;
  /// Words after the program when the setting holds several ("ccache g++": program ccache,
  /// prefix {"g++"}).
  std::vector<std::string> prefixArgs;
  /// The canonical path of `program`, the prefix words and the first line of `--version`.
  std::string identity;
};

/// Resolves `requested` (CompilerOptions::compiler), else $SPARSEFLOW_CXX, else $CXX, else "c++"
/// on PATH. Throws Error(kCompileError) naming the variables consulted when none is found.
/// The identity is computed once per process per compiler (thread-safe).
ResolvedCompiler resolveCompiler(const std::string& requested);

/// Runs the compiler: program, prefix, flags, source, "-o", output. Throws Error(kCompileError)
/// with the command line, exit status, the first 40 lines of diagnostics and `keptSource` (the
/// path to name for users) when it fails. Prints the command line to stderr at SPARSEFLOW_DEBUG>=1.
void runCompiler(const ResolvedCompiler& compiler, const std::vector<std::string>& flags,
                 const std::filesystem::path& source, const std::filesystem::path& output,
                 const std::filesystem::path& keptSource);

/// A command line as a user could paste it into a POSIX shell (display only; never executed).
std::string formatCommandLine(const std::vector<std::string>& argv);

/// $SPARSEFLOW_DEBUG as an integer; 0 when unset or not a number.
int debugLevel();

}  // namespace sparseflow::jit::detail
