// The `sparseflow` command: subcommands for inspecting, converting and surveying sparse tensors.
// Installed beside it as `sparseflow-X` (convert, audit, benchmark), it runs subcommand X.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sparseflow/commands.h"
#include "sparseflow/error.h"

namespace {

/// "X" when the program was started as `sparseflow-X` (a link to this binary), else "".
std::string subcommandFromName(const char* argv0) {
  const char* slash = std::strrchr(argv0, '/');
  const std::string name = slash ? slash + 1 : argv0;
  const std::string prefix = "sparseflow-";
  return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 ? name.substr(prefix.size())
                                                                   : "";
}

}  // namespace

int main(int argc, char** argv) {
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
  sparseflow::tools::addBenchmarkCommand(app, action);
  sparseflow::tools::addAuditCommand(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return action();
  } catch (const sparseflow::Error& e) {
    std::fprintf(stderr, "sparseflow: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparseflow: error: %s\n", e.what());
    return 1;
  }
}
