// Compiler driver: find the compiler, memoize its identity, run it with posix_spawn and an argv
// array (never a shell) while capturing its output in an unlinked temporary file.
#include "jit/compiler_driver.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "support/check.h"

extern char** environ;

namespace sparseflow::jit::detail {
namespace {

constexpr int kDiagnosticLines = 40;
constexpr size_t kMaxCapturedBytes = size_t{1} << 20;

std::string envOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

std::string describeVariable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::string(name) + " is unset";
  return std::string(name) + "='" + value + "'";
}

std::vector<std::string> splitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

/// The program as execvp would find it; empty when not found.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return isExecutableFile(name) ? name : std::string();
  std::string path = envOrEmpty("PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    if (dir.empty()) dir = ".";
    std::string candidate = std::move(dir);
    candidate += '/';
    candidate += name;
    if (isExecutableFile(candidate)) return candidate;
    begin = end + 1;
  }
  return {};
}

/// What a finished child did.
struct ProcessResult {
  int exitStatus = -1;  ///< exit code, or -1 when killed by a signal
  int signal = 0;       ///< the signal that killed it
  std::string output;   ///< stdout and stderr together (at most kMaxCapturedBytes)
};

/// An unlinked temporary file in the system temp dir, for the child's output.
int createCaptureFile() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string pattern = (dir / "sparseflow-jit-output-XXXXXX").string();
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  SF_CHECK_CODE(fd >= 0, ErrorCode::kCompileError)
      << "JIT: cannot create a temporary file in " << dir
      << " for compiler output: " << std::strerror(errno);
  ::unlink(pattern.c_str());
  return fd;
}

std::string readAll(int fd) {
  std::string out;
  ::lseek(fd, 0, SEEK_SET);
  char buffer[8192];
  while (out.size() < kMaxCapturedBytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

/// Runs argv[0] (a path) with argv, stdin from /dev/null, stdout and stderr captured.
ProcessResult runProcess(const std::vector<std::string>& argv) {
  const int captureFd = createCaptureFile();
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, captureFd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, captureFd, STDERR_FILENO);
  pid_t pid = -1;
  const int spawnError = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawnError != 0) {
    ::close(captureFd);
    SF_FAIL(kCompileError) << "JIT: cannot start the compiler: " << formatCommandLine(argv) << ": "
                           << std::strerror(spawnError);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      const int error = errno;
      ::close(captureFd);
      SF_FAIL(kCompileError) << "JIT: waiting for the compiler failed: " << std::strerror(error);
    }
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exitStatus = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.output = readAll(captureFd);
  ::close(captureFd);
  return result;
}

std::string firstLine(const std::string& text) {
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

/// The first `count` lines of `text`, and how many were left out.
std::string headLines(const std::string& text, int count) {
  std::istringstream in(text);
  std::ostringstream out;
  int lines = 0, omitted = 0;
  for (std::string line; std::getline(in, line);) {
    if (lines < count) {
      out << "  " << line << "\n";
      ++lines;
    } else {
      ++omitted;
    }
  }
  if (omitted > 0) out << "  ... (" << omitted << " more lines)\n";
  return out.str();
}

/// `--version`'s first line per command, computed once per process.
std::string versionLine(const std::vector<std::string>& command) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::string> memo;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = memo.find(command);
  if (found != memo.end()) return found->second;
  std::vector<std::string> argv = command;
  argv.push_back("--version");
  std::string line;
  try {
    ProcessResult result = runProcess(argv);
    line = result.exitStatus == 0 ? firstLine(result.output) : std::string("(unknown version)");
  } catch (const Error&) {
    line = "(unknown version)";
  }
  memo.emplace(command, line);
  return line;
}

}  // namespace

int debugLevel() {
  const char* value = std::getenv("SPARSEFLOW_DEBUG");
  return value ? std::atoi(value) : 0;
}

std::string formatCommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

ResolvedCompiler resolveCompiler(const std::string& requested) {
  std::string setting = requested, origin = "CompilerOptions::compiler";
  if (setting.empty() && !envOrEmpty("SPARSEFLOW_CXX").empty()) {
    setting = envOrEmpty("SPARSEFLOW_CXX");
    origin = "$SPARSEFLOW_CXX";
  }
  if (setting.empty() && !envOrEmpty("CXX").empty()) {
    setting = envOrEmpty("CXX");
    origin = "$CXX";
  }
  if (setting.empty()) {
    setting = "c++";
    origin = "the default 'c++' on $PATH";
  }
  const std::vector<std::string> words = splitWords(setting);
  const std::string program = words.empty() ? std::string() : findProgram(words[0]);
  SF_CHECK_CODE(!program.empty(), ErrorCode::kCompileError)
      << "JIT: no C++ compiler found: '" << setting << "' (from " << origin
      << ") is not an executable file or is not on $PATH. Consulted, in order: "
         "CompilerOptions::compiler, $SPARSEFLOW_CXX, $CXX, then 'c++' on $PATH ("
      << describeVariable("SPARSEFLOW_CXX") << ", " << describeVariable("CXX") << ", "
      << describeVariable("PATH")
      << "). Install a C++ compiler or set SPARSEFLOW_CXX to one to run generated kernels; "
         "hand-tuned kernels (2:4 linear) still work without a compiler.";

  ResolvedCompiler compiler;
  compiler.program = program;
  compiler.prefixArgs.assign(words.begin() + 1, words.end());
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(program, ec);
  std::vector<std::string> command{program};
  command.insert(command.end(), compiler.prefixArgs.begin(), compiler.prefixArgs.end());
  std::string identity = ec ? program : canonical.string();
  for (const std::string& word : compiler.prefixArgs) identity += " " + word;
  compiler.identity = identity + " | " + versionLine(command);
  return compiler;
}

void runCompiler(const ResolvedCompiler& compiler, const std::vector<std::string>& flags,
                 const std::filesystem::path& source, const std::filesystem::path& output,
                 const std::filesystem::path& keptSource) {
  std::vector<std::string> argv{compiler.program};
  argv.insert(argv.end(), compiler.prefixArgs.begin(), compiler.prefixArgs.end());
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(source.string());
  argv.push_back("-o");
  argv.push_back(output.string());
  if (debugLevel() >= 1) std::cerr << "sparseflow jit: " << formatCommandLine(argv) << std::endl;

  const ProcessResult result = runProcess(argv);
  if (result.exitStatus == 0) return;
  std::ostringstream status;
  if (result.signal != 0) {
    status << "killed by signal " << result.signal << " (" << strsignal(result.signal) << ")";
  } else {
    status << "exit status " << result.exitStatus;
  }
  SF_FAIL(kCompileError) << "JIT: the C++ compiler failed (" << status.str() << ")\n"
                         << "command: " << formatCommandLine(argv) << "\n"
                         << "source kept at: " << keptSource.string() << "\n"
                         << "diagnostics (first " << kDiagnosticLines << " lines):\n"
                         << headLines(result.output, kDiagnosticLines);
}

}  // namespace sparseflow::jit::detail
