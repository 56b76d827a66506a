// NAME=VALUE arguments (assignments.h).
#include "sparseflow/assignments.h"

#include "sparseflow/error.h"

namespace sparseflow::tools {

std::map<std::string, std::string> assignments(const std::string& option,
                                               const std::vector<std::string>& args,
                                               const char* valueWord) {
  std::map<std::string, std::string> out;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      throw Error(ErrorCode::kInvalidArgument,
                  option + " '" + arg + "': expected NAME=" + valueWord);
    }
    if (!out.emplace(arg.substr(0, eq), arg.substr(eq + 1)).second) {
      throw Error(ErrorCode::kInvalidArgument,
                  option + " given twice for '" + arg.substr(0, eq) + "'");
    }
  }
  return out;
}

}  // namespace sparseflow::tools
