// RegularFile (non-blocking open, regular files only) and checkOutputPath.
#include "support/file_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "support/check.h"

namespace sparseflow::support {

const char* fileTypeName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string systemReason(int err) {
  char buffer[256];
  // The GNU strerror_r returns the text (possibly not in `buffer`); it is thread-safe.
  return ::strerror_r(err, buffer, sizeof buffer);
}

RegularFile::RegularFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) {
    const int err = errno;  // read before anything else can change it
    SF_FAIL(kIoError) << "cannot open '" << path << "': " << systemReason(err);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    SF_FAIL(kIoError) << "cannot stat '" << path << "': " << systemReason(err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    SF_FAIL(kIoError) << "cannot read '" << path << "': it is " << fileTypeName(st.st_mode)
                      << "; sparseflow reads regular files only";
  }
  // Reads of a regular file never block; clear the flag so that nothing later depends on it.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)) {}

void checkOutputPath(const std::string& path) {
  SF_CHECK_CODE(!path.empty(), ErrorCode::kIoError) << "cannot write a file with an empty path";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    SF_CHECK_CODE(S_ISREG(st.st_mode), ErrorCode::kIoError)
        << "cannot write '" << path << "': it is " << fileTypeName(st.st_mode)
        << "; sparseflow writes regular files only";
    return;
  }
  const int err = errno;
  if (err != ENOENT) {
    // A dangling symbolic link is fine (the write replaces the link); anything else is not.
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return;
    SF_FAIL(kIoError) << "cannot write '" << path << "': " << systemReason(err);
  }
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return;  // the current directory exists
  const std::string folder = slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(folder.c_str(), &st) != 0) {
    const int folderErr = errno;
    SF_FAIL(kIoError) << "cannot write '" << path << "': its folder '" << folder
                      << "': " << systemReason(folderErr);
  }
  SF_CHECK_CODE(S_ISDIR(st.st_mode), ErrorCode::kIoError)
      << "cannot write '" << path << "': '" << folder << "' is " << fileTypeName(st.st_mode)
      << ", not a folder";
}

}  // namespace sparseflow::support
