// The on-disk cache: keys, entry paths, the per-key lock, atomic publication and verified loads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/jit.h"

namespace sparseflow::jit::detail {

/// A cache write that failed (read-only or full directory): the caller falls back to a private
/// temporary directory instead of failing the compile.
class CacheWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `requested`, else $SPARSEFLOW_CACHE_DIR, else $XDG_CACHE_HOME/sparseflow, else
/// $HOME/.cache/sparseflow; empty when none of them is set.
std::filesystem::path resolveCacheDir(const std::filesystem::path& requested);

/// SHA-256 (64 hex digits) over a format tag, the source, the compiler identity and the flags,
/// each length-prefixed.
std::string cacheKey(const std::string& source, const std::string& compilerIdentity,
                     const std::vector<std::string>& flags);

/// The files of one entry: `<cacheDir>/<key[0:2]>/<key>.{so,cpp,meta,lock}`.
struct EntryPaths {
  std::filesystem::path dir, library, source, meta, lock;
};
EntryPaths entryPaths(const std::filesystem::path& cacheDir, const std::string& key);

/// What `<key>.meta` records. Only key, size and checksum are verified; the rest is for people.
struct EntryMeta {
  std::string key;
  std::string librarySha256;
  uint64_t librarySize = 0;
  std::string compilerIdentity;
  std::vector<std::string> flags;
  int64_t createdUnixSeconds = 0;
};
std::string formatMeta(const EntryMeta& meta);
/// nullopt when the text is not a well-formed meta file.
std::optional<EntryMeta> parseMeta(const std::string& text);

/// An flock(2) on the per-key lock file, released by the destructor. Serializes the compiles of
/// one key across processes; a no-op when the lock file cannot be opened (correctness never
/// depends on it: every load verifies the checksum).
class KeyLock {
 public:
  explicit KeyLock(const std::filesystem::path& path);
  ~KeyLock();
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  void shared();
  void exclusive();

 private:
  int fd_ = -1;
};

/// The outcome of looking an entry up.
struct Lookup {
  enum class Status { kMissing, kLoaded, kCorrupt };
  Status status = Status::kMissing;
  std::shared_ptr<const Module> module;  ///< when kLoaded
  std::string reason;                    ///< when kCorrupt: what was wrong
};

/// The largest .so an entry may hold (generated kernels are tens of KiB), and the largest .meta.
inline constexpr uint64_t kMaxLibraryBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxMetaBytes = uint64_t{64} << 10;

/// What readRegularFile found.
struct FileRead {
  enum class Status { kRead, kMissing, kUnusable };
  Status status = Status::kMissing;
  std::string bytes;   ///< when kRead
  std::string reason;  ///< otherwise: what was wrong (names the path)
};

/// The whole of `path` when it is a regular file of at most `limit` bytes. Never follows a
/// symlink at the last component, never blocks on a FIFO or device, never reads more than
/// `limit` + 1 bytes (a growing file or /dev/zero behind the name is refused).
FileRead readRegularFile(const std::filesystem::path& path, uint64_t limit);

/// Reads the entry with readRegularFile (a missing .so is kMissing; a .so or .meta that is not a
/// bounded regular file is kCorrupt), verifies it (meta for this key, size and SHA-256 of the .so)
/// and loads exactly the bytes it verified through Module::load (a sealed private copy): the entry
/// file is never mapped, so rewriting it in place cannot disturb the loaded module, and its path
/// never reaches dlopen. A dlopen failure counts as corruption.
Lookup loadEntry(const EntryPaths& paths, const std::string& key);

/// Removes the entry's .so and .meta (the source and lock stay). Errors are ignored.
void removeEntry(const EntryPaths& paths);

/// Writes `contents` to a unique temporary file beside `target` (through the descriptor that
/// created it), fsyncs and renames it into place. Throws CacheWriteError.
void writeFileAtomically(const std::filesystem::path& target, const std::string& contents);

/// Creates a unique empty file `<dir>/<stem>.<pid>.XXXXXX<suffix>` (mode 0644). Throws
/// CacheWriteError.
std::filesystem::path createUniqueFile(const std::filesystem::path& dir, const std::string& stem,
                                       const std::string& suffix);

/// The whole file (a regular file of at most kMaxLibraryBytes, as readRegularFile); throws
/// CacheWriteError (named for the caller's fallback) otherwise.
std::string readFileBytes(const std::filesystem::path& path);

/// fsyncs a file or directory; errors are ignored (durability is best effort, the checksum guards
/// correctness).
void syncPath(const std::filesystem::path& path);

/// rename(2); throws CacheWriteError.
void renameFile(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace sparseflow::jit::detail
