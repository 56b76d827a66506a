// Whole-file text input and atomic text output for the subcommands (text_file.h).
#include "sparseflow/text_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sparseflow/error.h"
#include "sparseflow/process.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {

void writeTextFile(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  // Renamed over the path: a directory, FIFO or device (/dev/null) is refused, never replaced.
  const std::string special = fs::is_directory(target) ? "a directory" : specialFileKind(path);
  if (!special.empty()) {
    throw Error(ErrorCode::kIoError, "cannot write '" + path + "': it is " + special +
                                         "; sparseflow writes regular files only");
  }
  const fs::path temp = target.parent_path() / ("." + target.filename().string() + ".sparseflow-" +
                                                std::to_string(::getpid()) + ".tmp");
  StagingPath staging(temp.string(), false);  // removed if a signal ends the process
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      throw Error(ErrorCode::kIoError, "cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw Error(ErrorCode::kIoError, "cannot write '" + path + "': " + ec.message());
  }
}

std::string readTextFile(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  // Regular files only: a FIFO or a device would block or never end.
  namespace fs = std::filesystem;
  const std::string special = fs::is_directory(path) ? "a directory" : specialFileKind(path);
  if (!special.empty()) {
    throw Error(ErrorCode::kIoError, "cannot read '" + path + "': it is " + special +
                                         "; sparseflow reads regular files only");
  }
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxTextBytes) {
    throw Error(ErrorCode::kInvalidArgument,
                "'" + path + "' is " + std::to_string(size >> 20) +
                    " MiB; the text this command reads is far smaller (limit " +
                    std::to_string(kMaxTextBytes >> 20) + " MiB)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIoError, "cannot read '" + path + "'");
  text << in.rdbuf();
  if (in.bad()) throw Error(ErrorCode::kIoError, "cannot read '" + path + "'");
  return text.str();
}

}  // namespace sparseflow::tools
