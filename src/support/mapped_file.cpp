// Whole-file read-only memory maps of regular files, and atomic whole-file writes.
#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "support/check.h"
#include "support/file_checks.h"
#include "support/temp_paths.h"

namespace sparseflow::support {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  RegularFile file(path);  // refuses FIFOs, devices and directories without blocking
  size_ = static_cast<size_t>(file.size());
  if (size_ == 0) return;
  void* addr = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (addr == MAP_FAILED) {
    const int err = errno;
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
  data_ = other.data_;
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
  return *this;
}

void MappedFile::release() noexcept {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

void writeFileAtomically(const std::string& path, std::string_view bytes) {
  writeFileAtomically(path, std::vector<std::string_view>{bytes});
}

void writeFileAtomically(const std::string& path, const std::vector<std::string_view>& pieces) {
  checkOutputPath(path);  // a directory, FIFO or device is refused, never replaced
  // open(O_CREAT | O_EXCL, 0666) applies the umask like any new file (mkstemp would force 0600).
  std::random_device entropy;
  std::string tmp;
  int fd = -1;
  int openErr = 0;
  // Registered before it exists, so that no moment is left in which a signal would leave it; the
  // name holds this process's id, so a file already there is a dead process's leftover.
  TempPathRegistration staging;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(entropy());
    staging = TempPathRegistration(tmp, TempPathRegistration::Kind::kFile);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    openErr = fd < 0 ? errno : 0;
    if (fd < 0) staging.release();
    if (fd < 0 && openErr != EEXIST) break;
  }
  if (fd < 0) {
    SF_FAIL(kIoError) << "cannot write '" << path
                      << "': cannot create a temporary file beside it: " << systemReason(openErr);
  }
  int err = 0;
  const char* failed = "write";
  for (size_t k = 0; k < pieces.size() && err == 0; ++k) {
    const char* p = pieces[k].data();
    size_t left = pieces[k].size();
    while (left > 0 && err == 0) {
      const ssize_t n = ::write(fd, p, std::min<size_t>(left, size_t{1} << 30));
      if (n < 0) {
        const int writeErr = errno;
        if (writeErr != EINTR) err = writeErr;
        continue;
      }
      if (n == 0) err = EIO;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  // Without fsync a crash after the rename could leave an empty file under the final name.
  if (err == 0 && ::fsync(fd) != 0) err = errno, failed = "sync";
  if (::close(fd) != 0 && err == 0) err = errno, failed = "close";
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno, failed = "rename";
  if (err != 0) {
    ::unlink(tmp.c_str());
    SF_FAIL(kIoError) << "cannot write '" << path << "' (" << failed
                      << " failed): " << systemReason(err);
  }
}

}  // namespace sparseflow::support
