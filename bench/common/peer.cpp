// runPeer(): fork/exec with a pipe on the child's stdout (and its stderr in a temporary file when
// captured); parses the PEER, RESULT, FAILED, UNAVAILABLE and DONE lines.
#include "common/peer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace sparseflow::bench {
namespace {

/// "<key> <rest of the line>" of a FAILED or UNAVAILABLE line.
void parseKeyed(std::istringstream& in, std::map<std::string, std::string>& into) {
  std::string key, why;
  in >> key;
  std::getline(in >> std::ws, why);
  if (!key.empty()) into[key] = why;
}

void parseLine(const std::string& line, PeerRun& run, const PeerRunOptions& options) {
  std::istringstream in(line);
  std::string tag;
  in >> tag;
  if (tag == "PEER") {
    std::getline(in >> std::ws, run.name);
  } else if (tag == "RESULT") {
    std::string name;
    PeerResult result;
    in >> name >> result.seconds >> result.repetitions;
    std::getline(in >> std::ws, result.check);
    if (!in.fail() || in.eof()) run.results[name] = result;
  } else if (tag == "FAILED") {
    parseKeyed(in, run.failed);
  } else if (tag == "UNAVAILABLE") {
    parseKeyed(in, run.unavailable);
  } else if (tag == "DONE") {
    std::string what;
    std::getline(in >> std::ws, what);
    if (options.onDone) options.onDone(what);
  } else if (options.captureStderr) {
    run.log += line + "\n";
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

std::string readAll(FILE* file) {
  std::string text;
  std::rewind(file);
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
  return text;
}

/// The last `lines` lines of `text`, for an error message.
std::string tail(std::string text, int lines) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t at = text.size();
  for (int n = 0; n < lines && at != std::string::npos && at > 0; ++n) {
    at = text.rfind('\n', at - 1);
  }
  return at == std::string::npos || at == 0 ? text : text.substr(at + 1);
}

}  // namespace

PeerRun runPeer(const std::vector<std::string>& argv, const PeerRunOptions& options) {
  if (argv.empty()) throw std::runtime_error("runPeer: no command");
  std::unique_ptr<FILE, decltype(&std::fclose)> errors(
      options.captureStderr ? std::tmpfile() : nullptr, &std::fclose);
  if (options.captureStderr && !errors) {
    throw std::runtime_error(std::string("tmpfile: ") + std::strerror(errno));
  }
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;  // built before fork: the child only calls what exec needs
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    if (errors) dup2(fileno(errors.get()), STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    for (const std::string& assignment : options.env) putenv(const_cast<char*>(assignment.c_str()));
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  ::close(fds[1]);
  PeerRun run;
  FILE* out = fdopen(fds[0], "r");
  std::string line;
  for (int c; (c = std::fgetc(out)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    parseLine(line, run, options);
    line.clear();
  }
  if (!line.empty()) parseLine(line, run, options);
  std::fclose(out);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (errors) run.log += readAll(errors.get());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message = argv[0] + " failed (exit status " +
                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    if (!run.log.empty()) message += ":\n" + tail(run.log, 6);
    throw std::runtime_error(message);
  }
  return run;
}

}  // namespace sparseflow::bench
