// Whole-file read-only memory maps (with a read() fallback) and atomic whole-file writes.
#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "support/check.h"

namespace sparseflow::support {
namespace {

/// Closes a descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

std::string systemReason(int err) {
  return std::strerror(err);
}

/// Reads everything left in `fd` (for files that cannot be mapped); throws naming `path`.
std::string readAll(int fd, const std::string& path) {
  std::string out;
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      SF_FAIL(kIoError) << "cannot read '" << path << "': " << systemReason(err);
    }
    out.append(chunk, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    SF_FAIL(kIoError) << "cannot open '" << path << "': " << systemReason(err);
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    SF_FAIL(kIoError) << "cannot stat '" << path << "': " << systemReason(err);
  }
  SF_CHECK_CODE(!S_ISDIR(st.st_mode), ErrorCode::kIoError)
      << "cannot read '" << path << "': " << systemReason(EISDIR);
  if (!S_ISREG(st.st_mode)) {
    buffer_ = readAll(fd, path);
    data_ = buffer_.data();
    size_ = buffer_.size();
    return;
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  void* addr = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) {
    int err = errno;
    size_ = 0;
    SF_FAIL(kIoError) << "cannot map '" << path << "': " << systemReason(err);
  }
  // Readers scan front to back once; the hint doubles read-ahead. Failure is harmless.
  ::madvise(addr, size_, MADV_SEQUENTIAL);
  data_ = static_cast<const char*>(addr);
  mapped_ = true;
}

MappedFile::~MappedFile() {
  release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept {
  *this = std::move(other);
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  release();
  path_ = std::move(other.path_);
  mapped_ = other.mapped_;
  size_ = other.size_;
  buffer_ = std::move(other.buffer_);
  // A buffered file's bytes moved with buffer_ (possibly to a new address: small strings).
  data_ = mapped_ ? other.data_ : (size_ == 0 ? nullptr : buffer_.data());
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
  other.buffer_.clear();
  return *this;
}

void MappedFile::release() noexcept {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  buffer_.clear();
}

void writeFileAtomically(const std::string& path, std::string_view bytes) {
  writeFileAtomically(path, std::vector<std::string_view>{bytes});
}

void writeFileAtomically(const std::string& path, const std::vector<std::string_view>& pieces) {
  SF_CHECK_CODE(!path.empty(), ErrorCode::kIoError) << "cannot write a file with an empty path";
  // open(O_CREAT | O_EXCL, 0666) applies the umask like any new file (mkstemp would force 0600).
  std::random_device entropy;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(entropy());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int err = errno;
    SF_FAIL(kIoError) << "cannot write '" << path << "': " << systemReason(err);
  }
  int err = 0;
  for (size_t k = 0; k < pieces.size() && err == 0; ++k) {
    const char* p = pieces[k].data();
    size_t left = pieces[k].size();
    while (left > 0 && err == 0) {
      ssize_t n = ::write(fd, p, std::min<size_t>(left, size_t{1} << 30));
      if (n < 0) {
        if (errno != EINTR) err = errno;
        continue;
      }
      if (n == 0) err = EIO;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  // Without fsync a crash after the rename could leave an empty file under the final name.
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    SF_FAIL(kIoError) << "cannot write '" << path << "': " << systemReason(err);
  }
}

}  // namespace sparseflow::support
