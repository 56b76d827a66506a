// Opening inputs and checking outputs so that only regular files are read or replaced: a FIFO
// cannot block a read, /dev/zero cannot be read without end, and an output path that names a
// device, a FIFO or a directory is refused instead of replaced.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace sparseflow::support {

/// "a directory", "a FIFO (named pipe)", "a character device", "a block device", "a socket",
/// "a regular file", "a special file": what a file of this st_mode is, for messages.
const char* fileTypeName(mode_t mode);

/// The system's text for an errno value ("No such file or directory").
std::string systemReason(int err);

/// A regular file opened for reading. The open itself cannot block (O_NONBLOCK: a FIFO without a
/// writer would wait forever), and anything but a regular file, after following symbolic links,
/// is refused: kIoError "cannot read 'PATH': it is a FIFO (named pipe); sparseflow reads regular
/// files only". Errors of open() and fstat() name the path and the system's reason. Move-only;
/// closes the descriptor on destruction.
class RegularFile {
 public:
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  /// The size fstat reported when the file was opened.
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Throws kIoError naming `path` unless it can be the target of an atomic write: it may not exist
/// yet, or be a regular file (or a link to one, which the write replaces); a directory, a FIFO, a
/// device or a socket is refused ("cannot write 'PATH': it is a character device; sparseflow
/// writes regular files only"), and so is a path whose folder does not exist or is not a folder.
void checkOutputPath(const std::string& path);

}  // namespace sparseflow::support
