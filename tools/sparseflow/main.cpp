// The `sparseflow` command: subcommands for inspecting, converting and surveying sparse tensors.
// Installed beside it as `sparseflow-X` (convert, audit, benchmark), it runs subcommand X.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "sparseflow/commands.h"
#include "sparseflow/error.h"
#include "sparseflow/process.h"

namespace {

/// Exit statuses: 0 success, 1 a failure of the command (bad input, i/o, out of memory...), 2 a
/// command line that does not parse. A signal ends the process with the signal's own status.
constexpr int kFailed = 1;
constexpr int kUsage = 2;

/// "X" when the program was started as `sparseflow-X` (a link to this binary), else "".
std::string subcommandFromName(const char* argv0) {
  const char* slash = std::strrchr(argv0, '/');
  const std::string name = slash ? slash + 1 : argv0;
  const std::string prefix = "sparseflow-";
  return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 ? name.substr(prefix.size())
                                                                   : "";
}

/// Prints "sparseflow: error: MESSAGE" with the bytes of file names and file content that could
/// act on a terminal escaped (sparseflow::printableMessage).
int fail(int status, const std::string& message) {
  std::fprintf(stderr, "sparseflow: error: %s\n", sparseflow::printableMessage(message).c_str());
  return status;
}

/// Output that could not be written (a full disk, a closed pipe) is an error, not a success.
int checkedStdout(int status) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    return fail(status == 0 ? kFailed : status,
                std::string("cannot write the standard output: ") + std::strerror(err));
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Staging files of atomic writes are removed on Ctrl-C, SIGTERM and SIGHUP.
  sparseflow::removeTempFilesOnSignals();
  // `sparseflow-audit ARGS` is `sparseflow audit ARGS`.
  std::string implied = argc > 0 ? subcommandFromName(argv[0]) : "";
  std::vector<char*> args(argv, argv + argc);
  if (!implied.empty()) args.insert(args.begin() + 1, implied.data());
  argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  argv = args.data();
  // Named "sparseflow" whatever the link it ran as: usage reads `sparseflow audit [OPTIONS] IN`.
  CLI::App app{"sparseflow: sparse tensor formats, conversions and kernels", "sparseflow"};
  app.require_subcommand(1);
  sparseflow::tools::Action action;
  sparseflow::tools::addInfoCommand(app, action);
  sparseflow::tools::addConvertCommand(app, action);
  sparseflow::tools::addSurveyCommand(app, action);
  sparseflow::tools::addRunCommand(app, action);
  sparseflow::tools::addCompileCommand(app, action);
  sparseflow::tools::addOptCommand(app, action);
  sparseflow::tools::addTuneCommand(app, action);
  sparseflow::tools::addBenchmarkCommand(app, action);
  sparseflow::tools::addAuditCommand(app, action);
  sparseflow::tools::addOptimizeCommand(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // prints the usage error, or --help / --version
    return status == 0 ? 0 : kUsage;
  } catch (const sparseflow::Error& e) {  // an option's value rejected by its own parser
    return fail(kUsage, e.what());
  }
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  const std::string command =
      "sparseflow " + (chosen.empty() ? std::string("") : chosen.front()->get_name());
  try {
    return checkedStdout(action());
  } catch (const sparseflow::Error& e) {
    return checkedStdout(fail(kFailed, e.what()));
  } catch (const std::bad_alloc&) {
    return checkedStdout(fail(kFailed, "out of memory while running '" + command +
                                           "' (an allocation failed; the input may be larger "
                                           "than this machine's memory)"));
  } catch (const std::exception& e) {
    return checkedStdout(fail(kFailed, std::string(e.what())));
  }
}
