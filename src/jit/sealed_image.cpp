// SealedImage: verified bytes copied into a sealed memfd (or an owner-only temporary file).
#include "jit/sealed_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "support/check.h"

namespace sparseflow::jit::detail {
namespace {

bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

SealedImage::SealedImage(const std::string& bytes, Kind kind, const std::string& what)
    : kind_(kind) {
  if (kind == Kind::kMemfd) {
    fd_ = ::memfd_create("sparseflow-jit", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    SF_CHECK_CODE(fd_ >= 0, ErrorCode::kCompileError)
        << "JIT: cannot create a memfd for " << what << ": " << std::strerror(errno);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    const bool written = writeAll(fd_, bytes);
    const int error = errno;
    // Sealed: no descriptor, mapping or /proc path can change, grow or shrink these bytes now.
    const bool sealed =
        written &&
        ::fcntl(fd_, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
    if (!sealed) {
      const int sealError = written ? errno : error;
      ::close(fd_);
      fd_ = -1;
      SF_FAIL(kCompileError) << "JIT: cannot " << (written ? "seal" : "fill") << " the memfd for "
                             << what << ": " << std::strerror(sealError);
    }
    return;
  }
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string pattern = (dir / "sparseflow-jit-XXXXXX.so").string();
  fd_ = ::mkostemps(pattern.data(), 3, O_CLOEXEC);  // mode 0600: only this user may open it
  SF_CHECK_CODE(fd_ >= 0, ErrorCode::kCompileError)
      << "JIT: cannot create a private copy of " << what << " in " << dir.string() << ": "
      << std::strerror(errno);
  path_ = pattern;
  if (!writeAll(fd_, bytes) || ::fchmod(fd_, 0400) != 0) {
    const int error = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
    SF_FAIL(kCompileError) << "JIT: cannot write " << path_ << ": " << std::strerror(error);
  }
}

SealedImage::~SealedImage() {
  if (keep_ || fd_ < 0) return;
  if (kind_ == Kind::kPrivateFile) ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace sparseflow::jit::detail
