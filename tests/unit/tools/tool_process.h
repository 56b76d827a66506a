// Runs a built tool (`sparseflow` or one of its `sparseflow-X` links) as a process in a scratch
// directory, capturing its exit status, stdout and stderr; for the tools' tests.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace sparseflow::testing {

struct ToolResult {
  int status = -1;
  std::string out, err;
  int64_t peakRssKb = 0;  ///< the process's peak resident memory (getrusage's ru_maxrss)
};

inline std::string slurpFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A scratch directory per test (removed with the suite) and a way to run the tools in it.
class ToolTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/sparseflow-tools-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  void SetUp() override {
    dir_ = root_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }

  /// Runs bin/`tool` (argv, no shell) in the test's directory; stdin is /dev/null, stdout and
  /// stderr are files (so the tool sees no terminal). Compiled kernels go to the tests' cache.
  ToolResult run(const std::string& tool, const std::vector<std::string>& args) const {
    const std::filesystem::path outFile = dir_.parent_path() / (dir_.filename().string() + ".out");
    const std::filesystem::path errFile = dir_.parent_path() / (dir_.filename().string() + ".err");
    std::vector<std::string> argv{std::string(SPARSEFLOW_TOOLS_DIR) + "/" + tool};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> env{std::string("SPARSEFLOW_CACHE_DIR=") + SPARSEFLOW_TEST_CACHE_DIR,
                                 "OMP_NUM_THREADS=2"};
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "SPARSEFLOW_CACHE_DIR=", 21) != 0 &&
          std::strncmp(*e, "OMP_NUM_THREADS=", 16) != 0) {
        env.emplace_back(*e);
      }
    }
    std::vector<char*> cenv;
    for (std::string& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, outFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());
    pid_t pid = 0;
    ToolResult r;
    if (posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data()) == 0) {
      int status = 0;
      struct rusage usage {};
      wait4(pid, &status, 0, &usage);
      r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      r.peakRssKb = usage.ru_maxrss;
    }
    posix_spawn_file_actions_destroy(&actions);
    r.out = slurpFile(outFile);
    r.err = slurpFile(errFile);
    return r;
  }

  /// Names in the test's directory (or a folder of it), sorted.
  std::vector<std::string> files(const std::string& sub = "") const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / sub)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static inline std::filesystem::path root_;
  std::filesystem::path dir_;
};

}  // namespace sparseflow::testing
