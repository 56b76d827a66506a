// runPeer(): fork/exec with a pipe on the child's stdout; parses PEER and RESULT lines.
#include "common/peer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace sparseflow::bench {
namespace {

void parseLine(const std::string& line, PeerRun& run) {
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
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

PeerRun runPeer(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::runtime_error("runPeer: no command");
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  PeerRun run;
  FILE* out = fdopen(fds[0], "r");
  std::string line;
  for (int c; (c = std::fgetc(out)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    parseLine(line, run);
    line.clear();
  }
  if (!line.empty()) parseLine(line, run);
  std::fclose(out);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(argv[0] + " failed (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return run;
}

}  // namespace sparseflow::bench
