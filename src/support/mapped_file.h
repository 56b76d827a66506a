// Whole-file read-only memory maps for the readers, and atomic whole-file writes for the writers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sparseflow::support {

/// A read-only view of a whole file, memory-mapped so readers parse it in place without copying.
/// Empty files are fine (data() is empty). Only regular files (or links to them) are read: a FIFO,
/// a device such as /dev/zero or a directory is refused with an error naming it (RegularFile), so
/// that nothing blocks or grows without bound. Move-only; unmaps on destruction.
class MappedFile {
 public:
  /// Opens and maps `path`; throws Error(kIoError) naming the path and the system's reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// The file's bytes; valid while this object lives.
  std::string_view data() const { return {data_, size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // data_ came from mmap (false for empty files)
};

/// Writes `bytes` to `path` so that readers see either the old file or the complete new one, never
/// a partial write: the bytes go to a temporary file in the same directory, which is then renamed
/// over `path`. Throws Error(kIoError) naming the path and the system's reason (read right after
/// the call that failed); the temporary file is removed on failure, and is registered
/// (temp_paths.h) while it exists so that a program interrupted by a signal can remove it. An
/// existing `path` that is not a regular file (a directory, FIFO or device) is refused
/// (checkOutputPath), never replaced.
void writeFileAtomically(const std::string& path, std::string_view bytes);
/// The same for a file made of several pieces written one after the other (no copy into one
/// buffer first: a checkpoint's header, then its arrays).
void writeFileAtomically(const std::string& path, const std::vector<std::string_view>& pieces);

}  // namespace sparseflow::support
