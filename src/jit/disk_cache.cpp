// Disk cache: key hashing, entry layout, the per-key flock, atomic writes and verified loads.
#include "jit/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

/// Reads up to `limit` + 1 bytes from `fd` into `out`; false on a read error.
bool readFdBounded(int fd, uint64_t limit, std::string& out) {
  out.clear();
  char buffer[65536];
  while (out.size() <= limit) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(sizeof buffer, limit + 1 - out.size()));
    const ssize_t n = ::read(fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buffer, static_cast<size_t>(n));
  }
  return true;
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
  // O_NOFOLLOW: never create or lock a file a planted symlink points at; O_NONBLOCK: a FIFO
  // planted at the path does not hang the open (flock on it is harmless).
  constexpr int kFlags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | kFlags, 0644);
  // flock works on a read-only descriptor too: a read-only cache still serializes with writers.
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | kFlags);
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

FileRead readRegularFile(const std::filesystem::path& path, uint64_t limit) {
  FileRead result;
  // O_NOFOLLOW: a symlink (to /dev/zero, to another user's file) is refused, not followed.
  // O_NONBLOCK: a FIFO planted at the path is opened without waiting for a writer, then refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    result.status = errno == ENOENT ? FileRead::Status::kMissing : FileRead::Status::kUnusable;
    result.reason =
        errno == ELOOP ? path.string() + " is a symbolic link" : errnoText("cannot open", path);
    return result;
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closeLater{fd};
  result.status = FileRead::Status::kUnusable;
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    result.reason = errnoText("cannot stat", path);
    return result;
  }
  if (!S_ISREG(info.st_mode)) {
    result.reason = path.string() + " is not a regular file";
    return result;
  }
  if (static_cast<uint64_t>(info.st_size) > limit) {
    result.reason = path.string() + " has " + std::to_string(info.st_size) +
                    " bytes, more than the limit of " + std::to_string(limit);
    return result;
  }
  if (!readFdBounded(fd, limit, result.bytes)) {
    result.reason = errnoText("cannot read", path);
    return result;
  }
  if (result.bytes.size() > limit) {  // grew while read
    result.reason = path.string() + " grew past the limit of " + std::to_string(limit) + " bytes";
    return result;
  }
  result.status = FileRead::Status::kRead;
  return result;
}

Lookup loadEntry(const EntryPaths& paths, const std::string& key) {
  FileRead library = readRegularFile(paths.library, kMaxLibraryBytes);
  if (library.status == FileRead::Status::kMissing) return Lookup{};
  if (library.status != FileRead::Status::kRead) return corrupt(library.reason);
  const FileRead metaFile = readRegularFile(paths.meta, kMaxMetaBytes);
  if (metaFile.status != FileRead::Status::kRead) return corrupt(metaFile.reason);
  const std::optional<EntryMeta> meta = parseMeta(metaFile.bytes);
  if (!meta) return corrupt("malformed " + paths.meta.string());
  if (meta->key != key) return corrupt(paths.meta.string() + " names key " + meta->key);

  const std::string& bytes = library.bytes;
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
    // The verified bytes themselves, from sealed private memory: the entry may be replaced or
    // rewritten in place meanwhile, and the path never reaches dlopen (which would hand back a
    // stale handle for a path it has seen).
    Lookup lookup;
    lookup.status = Lookup::Status::kLoaded;
    lookup.module = Module::load(bytes, paths.library);
    return lookup;
  } catch (const Error& e) {
    return corrupt(std::string("dlopen failed: ") + e.what());
  }
}

void removeEntry(const EntryPaths& paths) {
  ::unlink(paths.library.c_str());
  ::unlink(paths.meta.c_str());
}

namespace {

/// mkostemps of `<dir>/<stem>.<pid>.XXXXXX<suffix>` (mode 0644); the open descriptor.
int createUniqueFd(const std::filesystem::path& dir, const std::string& stem,
                   const std::string& suffix, std::filesystem::path* created) {
  std::string pattern =
      (dir / (stem + "." + std::to_string(::getpid()) + ".XXXXXX" + suffix)).string();
  const int fd = ::mkostemps(pattern.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  if (fd < 0) throw CacheWriteError(errnoText("cannot create a file in", dir));
  ::fchmod(fd, 0644);
  *created = pattern;
  return fd;
}

}  // namespace

std::filesystem::path createUniqueFile(const std::filesystem::path& dir, const std::string& stem,
                                       const std::string& suffix) {
  std::filesystem::path created;
  ::close(createUniqueFd(dir, stem, suffix, &created));
  return created;
}

void writeFileAtomically(const std::filesystem::path& target, const std::string& contents) {
  // Written through the descriptor mkostemps opened: the name is never opened again, so a file
  // swapped in under it meanwhile cannot redirect the write.
  std::filesystem::path temp;
  const int fd = createUniqueFd(target.parent_path(), target.filename().string(), ".tmp", &temp);
  const bool ok = writeFd(fd, contents) && ::fsync(fd) == 0;
  const std::string error = ok ? std::string() : errnoText("cannot write", temp);
  ::close(fd);
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
  FileRead read = readRegularFile(path, kMaxLibraryBytes);
  if (read.status != FileRead::Status::kRead) throw CacheWriteError(read.reason);
  return std::move(read.bytes);
}

void syncPath(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
