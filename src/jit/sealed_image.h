// A private, unchangeable copy of verified shared-object bytes for dlopen: the loader maps these
// bytes, never a file that another process (or `cp` over a cache entry) could rewrite under it.
#pragma once

#include <string>

namespace sparseflow::jit::detail {

/// The bytes in a sealed memfd (memfd_create + F_SEAL_WRITE/SHRINK/GROW/SEAL), opened by dlopen
/// as /proc/self/fd/N; where memfds or /proc are unavailable, an owner-only temporary file in the
/// system temp dir that nobody else may write. The descriptor stays open while the image lives,
/// so that the path dlopen remembers names these bytes and no others.
class SealedImage {
 public:
  enum class Kind { kMemfd, kPrivateFile };

  /// Throws Error(kCompileError) naming `what` (the cache entry) when no copy can be made.
  SealedImage(const std::string& bytes, Kind kind, const std::string& what);
  ~SealedImage();
  SealedImage(const SealedImage&) = delete;
  SealedImage& operator=(const SealedImage&) = delete;

  /// The path to give dlopen.
  const std::string& path() const { return path_; }
  Kind kind() const { return kind_; }

  /// Never closes the descriptor nor removes the file: for a module that stays resident after
  /// dlclose (glibc would hand its handle back for this path, so the path must keep its bytes).
  void keepForever() { keep_ = true; }

 private:
  Kind kind_;
  int fd_ = -1;
  std::string path_;
  bool keep_ = false;
};

}  // namespace sparseflow::jit::detail
