// The `sparseflow` command: subcommands for inspecting, converting and surveying sparse tensors.
#include <cstdio>

#include "sparseflow/commands.h"
#include "sparseflow/error.h"

int main(int argc, char** argv) {
  CLI::App app{"sparseflow: sparse tensor formats, conversions and kernels"};
  app.require_subcommand(1);
  sparseflow::tools::Action action;
  sparseflow::tools::addInfoCommand(app, action);
  sparseflow::tools::addConvertCommand(app, action);
  sparseflow::tools::addSurveyCommand(app, action);
  sparseflow::tools::addRunCommand(app, action);
  sparseflow::tools::addCompileCommand(app, action);
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
