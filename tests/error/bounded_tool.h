// Runs the `sparseflow` tool as a child process with bounds a bad input must stay within: a
// wall-clock limit (killed past it), an address-space limit (RLIMIT_AS; not under sanitizers,
// whose shadow memory needs terabytes of address space), no core dumps; for the bad-input sweep.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace sparseflow::testing {

struct BoundedResult {
  bool started = false;
  bool timedOut = false;
  bool signaled = false;  ///< ended by a signal (a crash, or the timeout's SIGKILL)
  int signal = 0;
  int status = -1;  ///< exit status when it exited
  double seconds = 0;
  std::string out, err;
};

struct BoundedOptions {
  std::string cwd;
  double timeoutSeconds = 20;
  uint64_t addressSpaceBytes = uint64_t{1} << 30;  ///< RLIMIT_AS; 0: none
  std::string stdoutPath;                          ///< "" : a file beside the stderr file
  /// Called with the child's pid while it runs, every millisecond until it returns false (for
  /// tests that signal the child); may be empty.
  std::function<bool(pid_t)> watch;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `argv` (argv[0] an absolute path) with `options`; stdin is /dev/null. Output goes to
/// `captureBase`.out and .err (or to options.stdoutPath for stdout).
inline BoundedResult runBounded(const std::vector<std::string>& argv, const BoundedOptions& options,
                                const std::string& captureBase) {
  BoundedResult r;
  const std::string outPath =
      options.stdoutPath.empty() ? captureBase + ".out" : options.stdoutPath;
  const std::string errPath = captureBase + ".err";
  std::vector<std::string> env{std::string("SPARSEFLOW_CACHE_DIR=") + SPARSEFLOW_TEST_CACHE_DIR,
                               "OMP_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=1"};
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "SPARSEFLOW_CACHE_DIR=", 21) != 0 &&
        std::strncmp(*e, "OMP_NUM_THREADS=", 16) != 0 &&
        std::strncmp(*e, "OPENBLAS_NUM_THREADS=", 21) != 0) {
      env.emplace_back(*e);
    }
  }
  std::vector<char*> cargv, cenv;
  std::vector<std::string> args = argv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (std::string& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // In the child: only async-signal-safe calls until exec.
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) ::_exit(125);
    ::dup2(in, 0), ::dup2(out, 1), ::dup2(err, 2);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(125);
    struct rlimit noCore {
      0, 0
    };
    ::setrlimit(RLIMIT_CORE, &noCore);
#ifndef SPARSEFLOW_SANITIZED
    if (options.addressSpaceBytes > 0) {
      struct rlimit as {
        options.addressSpaceBytes, options.addressSpaceBytes
      };
      ::setrlimit(RLIMIT_AS, &as);
    }
#endif
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  if (pid < 0) return r;
  r.started = true;
  int status = 0;
  bool watching = static_cast<bool>(options.watch);
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > options.timeoutSeconds && !r.timedOut) {
      r.timedOut = true;
      ::kill(pid, SIGKILL);
    }
    if (watching) watching = options.watch(pid);
    std::this_thread::sleep_for(std::chrono::microseconds(watching ? 200 : 2000));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signaled = true, r.signal = WTERMSIG(status);
  r.out = options.stdoutPath.empty() ? slurp(outPath) : "";  // never read a device back
  r.err = slurp(errPath);
  return r;
}

}  // namespace sparseflow::testing
