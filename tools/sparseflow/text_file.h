// Text output of the `sparseflow` subcommands: a whole file written atomically (through a
// temporary in the same directory, renamed when complete).
#pragma once

#include <cstdint>
#include <string>

namespace sparseflow::tools {

/// Writes `text` to `path`; a directory, FIFO or device is refused, never replaced. Throws
/// kIoError.
void writeTextFile(const std::string& path, const std::string& text);

/// The most bytes readTextFile reads from a file (kernel texts and IR are kilobytes).
inline constexpr uintmax_t kMaxTextBytes = uintmax_t{64} << 20;

/// The whole of `path` ("-": the standard input): a regular file of at most kMaxTextBytes. Throws
/// kIoError (or kInvalidArgument for a larger file) naming the path.
std::string readTextFile(const std::string& path);

}  // namespace sparseflow::tools
