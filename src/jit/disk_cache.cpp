// Disk cache: key hashing, entry layout, the per-key flock, atomic writes and verified loads.
#include "jit/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>

#include "jit/sha256.h"
#include "sparseflow/error.h"

namespace sparseflow::jit::detail {
namespace {

constexpr const char* kMetaHeader = "sparseflow-jit-cache 1";

std::string errnoText(const std::string& what, const std::filesystem::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

/// Reads everything from `fd`; false on a read error.
bool readFd(int fd, std::string& out) {
  out.clear();
  struct stat info {};
  if (::fstat(fd, &info) == 0 && info.st_size > 0) out.reserve(static_cast<size_t>(info.st_size));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool writeFd(int fd, const std::string& contents) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// A name no other thread or process uses: pid plus a per-process counter.
std::filesystem::path uniqueSibling(const std::filesystem::path& dir, const std::string& stem,
                                    const std::string& suffix) {
  static std::atomic<uint64_t> counter{0};
  return dir / (stem + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + suffix);
}

/// dlopens the bytes behind `fd` (already verified) under a name nobody has loaded before.
std::shared_ptr<const Module> loadVerified(int fd, const std::string& bytes,
                                           const EntryPaths& paths, const std::string& key) {
  // A hard link to the opened inode: the very bytes we hashed, even if the entry is replaced
  // meanwhile, and a fresh name, so dlopen cannot hand back a stale handle for this path.
  const std::string procPath = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::filesystem::path link = uniqueSibling(paths.dir, key, ".load");
    if (::linkat(AT_FDCWD, procPath.c_str(), AT_FDCWD, link.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      struct Unlink {
        const std::filesystem::path& path;
        ~Unlink() { ::unlink(path.c_str()); }
      } unlinkLater{link};
      return Module::load(link, paths.library);
    }
    if (errno != EEXIST) break;
  }
  // No hard link (read-only cache, no /proc): a private copy in the system temp dir.
  std::error_code ec;
  std::filesystem::path tempDir = std::filesystem::temp_directory_path(ec);
  if (ec) tempDir = "/tmp";
  std::string pattern = (tempDir / ("sparseflow-jit-" + key.substr(0, 16) + ".XXXXXX")).string();
  const int copyFd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (copyFd < 0) {
    throw Error(ErrorCode::kCompileError,
                errnoText("JIT: cannot create a private copy in", tempDir));
  }
  struct Cleanup {
    int fd;
    const std::string& path;
    ~Cleanup() {
      ::close(fd);
      ::unlink(path.c_str());
    }
  } cleanup{copyFd, pattern};
  if (!writeFd(copyFd, bytes)) {
    throw Error(ErrorCode::kCompileError, errnoText("JIT: cannot write", pattern));
  }
  return Module::load(pattern, paths.library);
}

Lookup corrupt(std::string reason) {
  Lookup lookup;
  lookup.status = Lookup::Status::kCorrupt;
  lookup.reason = std::move(reason);
  return lookup;
}

}  // namespace

std::filesystem::path resolveCacheDir(const std::filesystem::path& requested) {
  if (!requested.empty()) return requested;
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' ? std::filesystem::path(value)
                                                : std::filesystem::path();
  };
  if (auto dir = env("SPARSEFLOW_CACHE_DIR"); !dir.empty()) return dir;
  if (auto dir = env("XDG_CACHE_HOME"); !dir.empty()) return dir / "sparseflow";
  if (auto dir = env("HOME"); !dir.empty()) return dir / ".cache" / "sparseflow";
  return {};
}

std::string cacheKey(const std::string& source, const std::string& compilerIdentity,
                     const std::vector<std::string>& flags) {
  Sha256 hash;
  hash.updateField("sparseflow-jit-key-v1");
  hash.updateField(source);
  hash.updateField(compilerIdentity);
  hash.updateField(std::to_string(flags.size()));
  for (const std::string& flag : flags) hash.updateField(flag);
  return hash.hexDigest();
}

EntryPaths entryPaths(const std::filesystem::path& cacheDir, const std::string& key) {
  EntryPaths paths;
  paths.dir = cacheDir / key.substr(0, 2);
  paths.library = paths.dir / (key + ".so");
  paths.source = paths.dir / (key + ".cpp");
  paths.meta = paths.dir / (key + ".meta");
  paths.lock = paths.dir / (key + ".lock");
  return paths;
}

std::string formatMeta(const EntryMeta& meta) {
  auto oneLine = [](std::string text) {
    for (char& c : text) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return text;
  };
  char created[64] = "";
  const std::time_t seconds = static_cast<std::time_t>(meta.createdUnixSeconds);
  std::tm utc{};
  if (::gmtime_r(&seconds, &utc) != nullptr) {
    std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  }
  std::ostringstream out;
  out << kMetaHeader << "\n"
      << "key " << meta.key << "\n"
      << "so-sha256 " << meta.librarySha256 << "\n"
      << "so-size " << meta.librarySize << "\n"
      << "compiler " << oneLine(meta.compilerIdentity) << "\n";
  for (const std::string& flag : meta.flags) out << "flag " << oneLine(flag) << "\n";
  out << "created " << meta.createdUnixSeconds << " " << created << "\n";
  return out.str();
}

std::optional<EntryMeta> parseMeta(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMetaHeader) return std::nullopt;
  EntryMeta meta;
  bool haveSize = false;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) return std::nullopt;
    const std::string field = line.substr(0, space), value = line.substr(space + 1);
    if (field == "key") {
      meta.key = value;
    } else if (field == "so-sha256") {
      meta.librarySha256 = value;
    } else if (field == "so-size") {
      char* end = nullptr;
      meta.librarySize = std::strtoull(value.c_str(), &end, 10);
      haveSize = end != value.c_str() && *end == '\0';
    } else if (field == "compiler") {
      meta.compilerIdentity = value;
    } else if (field == "flag") {
      meta.flags.push_back(value);
    } else if (field == "created") {
      meta.createdUnixSeconds = std::strtoll(value.c_str(), nullptr, 10);
    }
  }
  if (meta.key.empty() || meta.librarySha256.size() != 64 || !haveSize) return std::nullopt;
  return meta;
}

KeyLock::KeyLock(const std::filesystem::path& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // flock works on a read-only descriptor too: a read-only cache still serializes with writers.
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

KeyLock::~KeyLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

void KeyLock::shared() {
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_SH) != 0 && errno == EINTR) {
  }
}

void KeyLock::exclusive() {
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

Lookup loadEntry(const EntryPaths& paths, const std::string& key) {
  const int fd = ::open(paths.library.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Lookup{};
    return corrupt(errnoText("cannot open", paths.library));
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closeLater{fd};

  std::string metaText;
  const int metaFd = ::open(paths.meta.c_str(), O_RDONLY | O_CLOEXEC);
  if (metaFd < 0) return corrupt(errnoText("cannot open", paths.meta));
  const bool metaRead = readFd(metaFd, metaText);
  ::close(metaFd);
  if (!metaRead) return corrupt(errnoText("cannot read", paths.meta));
  const std::optional<EntryMeta> meta = parseMeta(metaText);
  if (!meta) return corrupt("malformed " + paths.meta.string());
  if (meta->key != key) return corrupt(paths.meta.string() + " names key " + meta->key);

  std::string bytes;
  if (!readFd(fd, bytes)) return corrupt(errnoText("cannot read", paths.library));
  if (bytes.size() != meta->librarySize) {
    return corrupt(paths.library.string() + " has " + std::to_string(bytes.size()) +
                   " bytes, .meta says " + std::to_string(meta->librarySize) + " (truncated?)");
  }
  const std::string digest = sha256Hex(bytes.data(), bytes.size());
  if (digest != meta->librarySha256) {
    return corrupt("checksum mismatch: " + paths.library.string() + " has SHA-256 " + digest +
                   ", .meta says " + meta->librarySha256);
  }
  try {
    Lookup lookup;
    lookup.status = Lookup::Status::kLoaded;
    lookup.module = loadVerified(fd, bytes, paths, key);
    return lookup;
  } catch (const Error& e) {
    return corrupt(std::string("dlopen failed: ") + e.what());
  }
}

void removeEntry(const EntryPaths& paths) {
  ::unlink(paths.library.c_str());
  ::unlink(paths.meta.c_str());
}

std::filesystem::path createUniqueFile(const std::filesystem::path& dir, const std::string& stem,
                                       const std::string& suffix) {
  std::string pattern =
      (dir / (stem + "." + std::to_string(::getpid()) + ".XXXXXX" + suffix)).string();
  const int fd = ::mkostemps(pattern.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  if (fd < 0) throw CacheWriteError(errnoText("cannot create a file in", dir));
  ::fchmod(fd, 0644);
  ::close(fd);
  return pattern;
}

void writeFileAtomically(const std::filesystem::path& target, const std::string& contents) {
  const std::filesystem::path temp =
      createUniqueFile(target.parent_path(), target.filename().string(), ".tmp");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const bool ok = fd >= 0 && writeFd(fd, contents) && ::fsync(fd) == 0;
  const std::string error = ok ? std::string() : errnoText("cannot write", temp);
  if (fd >= 0) ::close(fd);
  if (!ok) {
    ::unlink(temp.c_str());
    throw CacheWriteError(error);
  }
  try {
    renameFile(temp, target);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
}

std::string readFileBytes(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw CacheWriteError(errnoText("cannot open", path));
  std::string bytes;
  const bool ok = readFd(fd, bytes);
  const std::string error = ok ? std::string() : errnoText("cannot read", path);
  ::close(fd);
  if (!ok) throw CacheWriteError(error);
  return bytes;
}

void syncPath(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void renameFile(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw CacheWriteError(errnoText("cannot rename " + from.string() + " to", to));
  }
}

}  // namespace sparseflow::jit::detail
