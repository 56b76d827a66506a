// Text output of the `sparseflow` subcommands: a whole file written atomically (through a
// temporary in the same directory, renamed when complete).
#pragma once

#include <string>

namespace sparseflow::tools {

/// Writes `text` to `path`; a directory, FIFO or device is refused, never replaced. Throws
/// kIoError.
void writeTextFile(const std::string& path, const std::string& text);

/// The whole of `path` ("-": the standard input). Throws kIoError naming the path.
std::string readTextFile(const std::string& path);

}  // namespace sparseflow::tools
