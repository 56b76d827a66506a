// NAME=VALUE command-line arguments (--in A=a.mtx, --format A=csr, --param alpha=2), read the same
// way by every `sparseflow` subcommand: the error names the option and the argument.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sparseflow::tools {

/// `args` given to `option` as a map; kInvalidArgument for an argument without a name or a value
/// ("--format 'A': expected NAME=FORMAT", `valueWord` naming what the value is) or a name given
/// twice.
std::map<std::string, std::string> assignments(const std::string& option,
                                               const std::vector<std::string>& args,
                                               const char* valueWord = "VALUE");

}  // namespace sparseflow::tools
