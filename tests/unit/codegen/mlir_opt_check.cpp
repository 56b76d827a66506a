// Parses every exported test kernel with mlir-opt-16 and lowers it with --sparse-compiler (static
// and dynamic shapes). Exits 77 (ctest: skipped) when mlir-opt-16 is not installed
// (Debian: mlir-16-tools); SPARSEFLOW_MLIR_OPT names another binary.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sparseflow/error.h"
#include "unit/codegen/mlir_cases.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

/// The mlir-opt binary: $SPARSEFLOW_MLIR_OPT, else mlir-opt-16 on $PATH; empty when none.
std::string findMlirOpt() {
  if (const char* env = std::getenv("SPARSEFLOW_MLIR_OPT"); env && *env) return env;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "mlir-opt-16";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

/// Runs argv (no shell) with stdout and stderr to `log`; returns the exit status.
int run(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main() {
  const std::string mlirOpt = findMlirOpt();
  if (mlirOpt.empty()) {
    std::printf("mlir-opt-16 not found (apt-get install mlir-16-tools): skipped\n");
    return 77;
  }
  char pattern[] = "/tmp/sparseflow-mlir-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path dir(pattern);
  int failures = 0, checks = 0;
  for (const auto& c : sparseflow::testing::mlirCases()) {
    for (bool dynamic : {false, true}) {
      const std::string name = c.name + (dynamic ? "_dynamic" : "_static");
      const fs::path file = dir / (name + ".mlir"), log = dir / (name + ".log");
      try {
        std::ofstream(file) << sparseflow::testing::exportCase(c, dynamic);
      } catch (const sparseflow::Error& e) {
        std::printf("FAIL %s: export threw: %s\n", name.c_str(), e.what());
        ++failures;
        continue;
      }
      const std::vector<std::vector<std::string>> commands = {
          {mlirOpt, file.string(), "-o", "/dev/null"},
          {mlirOpt, "--sparse-compiler", file.string(), "-o", "/dev/null"}};
      for (const auto& argv : commands) {
        ++checks;
        const int rc = run(argv, log);
        const char* what = argv.size() == 4 ? "parse" : "--sparse-compiler";
        if (rc != 0) {
          std::printf("FAIL %s (%s, exit %d):\n%s\n--- input:\n%s\n", name.c_str(), what, rc,
                      slurp(log).c_str(), slurp(file).c_str());
          ++failures;
        } else {
          std::printf("ok   %s (%s)\n", name.c_str(), what);
        }
      }
    }
  }
  std::error_code ignored;
  if (failures == 0) fs::remove_all(dir, ignored);
  std::printf("%d of %d mlir-opt checks failed (%s)\n", failures, checks, mlirOpt.c_str());
  return failures == 0 ? 0 : 1;
}
