// The JIT cache against entries that are not what they claim: rewritten in place while loaded or
// while loading, FIFOs, links to /dev/zero, oversized files; and caches that are read-only or do
// not exist yet. Each case is a correct module or a rebuild that says why, never a crash or hang.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "common/unprivileged.h"
#include "jit/disk_cache.h"
#include "jit/jit.h"
#include "jit/sha256.h"
#include "unit/jit/jit_test_helpers.h"

namespace sparseflow::jit {
namespace {

using detail::Lookup;

/// A kernel returning `value`; the same machine code size for every value.
std::string valueSource(const std::string& tag, int value) {
  return "// " + tag + "\nextern \"C\" int sf_value() { return " + std::to_string(1000 + value) +
         "; }\n";
}

int valueOf(const Module& module) {
  return module.function<int (*)()>("sf_value")() - 1000;
}

/// Overwrites the file's bytes through its existing inode (as `cp` or `rsync --inplace` do).
void rewriteInPlace(const fs::path& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

/// Runs `body`; a body still running after `seconds` is a hang: the test binary stops with a
/// message (its thread could not be unblocked) instead of hanging the test run.
void finishesWithin(int seconds, const std::string& what, const std::function<void()>& body) {
  auto done = std::async(std::launch::async, body);
  if (done.wait_for(std::chrono::seconds(seconds)) == std::future_status::timeout) {
    std::fprintf(stderr, "FAILED: %s did not finish within %d s (hang)\n", what.c_str(), seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();
}

/// Compiles a fresh kernel into `dir`, releases it (so that the next compile goes to disk), lets
/// `damage` replace the entry's .so, and expects the next compile to rebuild it saying `why`.
void expectRebuildWithin(const std::string& what,
                         const std::function<void(const fs::path&)>& damage,
                         const std::string& why) {
  SCOPED_TRACE(what);
  TempDir dir;
  const std::string source = dotSource(uniqueTag(what));
  const CompilerOptions options = optionsIn(dir.path());
  fs::path library;
  {
    const CompileResult first = compile(source, options);
    library = first.libraryPath;
  }
  damage(library);
  finishesWithin(60, what, [&] {
    const CompileResult rebuilt = compile(source, options);
    EXPECT_FALSE(rebuilt.fromCache);
    EXPECT_NE(rebuilt.note.find("rebuilt a corrupt cache entry"), std::string::npos)
        << rebuilt.note;
    EXPECT_NE(rebuilt.note.find(why), std::string::npos) << rebuilt.note;
    expectDotWorks(*rebuilt.module);
  });
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(library))) << "the entry was replaced";
  const CompileResult again = compile(source, options);
  EXPECT_TRUE(again.fromCache);
}

TEST(JitCacheSafety, LoadedModuleIsImmuneToInPlaceRewrites) {
  // A loaded module used to map the cache file itself (the build's file, or a hard link to the
  // entry): `cp other.so entry.so` then changed or truncated the code under it.
  TempDir dirA, dirB;
  const std::string tag = uniqueTag("in place");
  const CompileResult built = compile(valueSource(tag, 1), optionsIn(dirA.path()));
  const CompileResult other = compile(valueSource(tag, 2), optionsIn(dirB.path()));
  const std::string original = readText(built.libraryPath);
  const Lookup loaded = detail::loadEntry(detail::entryPaths(dirA.path(), built.key), built.key);
  ASSERT_EQ(loaded.status, Lookup::Status::kLoaded) << loaded.reason;
  ASSERT_EQ(valueOf(*built.module), 1);
  ASSERT_EQ(valueOf(*loaded.module), 1);

  rewriteInPlace(built.libraryPath, readText(other.libraryPath));
  EXPECT_EQ(valueOf(*built.module), 1) << "the module built into the cache changed under us";
  EXPECT_EQ(valueOf(*loaded.module), 1) << "the module loaded from the cache changed under us";
  rewriteInPlace(built.libraryPath, original.substr(0, original.size() / 3));  // truncated
  EXPECT_EQ(valueOf(*built.module), 1);
  EXPECT_EQ(valueOf(*loaded.module), 1);
}

TEST(JitCacheSafety, EntryRewrittenInPlaceWhileLoadingIsLoadedRightOrRefused) {
  TempDir dirA, dirB;
  const std::string tag = uniqueTag("while loading");
  const CompileResult a = compile(valueSource(tag, 1), optionsIn(dirA.path()));
  const CompileResult b = compile(valueSource(tag, 2), optionsIn(dirB.path()));
  const std::string bytesA = readText(a.libraryPath), bytesB = readText(b.libraryPath);
  const detail::EntryPaths paths = detail::entryPaths(dirA.path(), a.key);

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    // Cycles the entry's inode through other code, a truncated copy, garbage and itself.
    const std::string variants[] = {bytesB, bytesA.substr(0, bytesA.size() / 2),
                                    std::string(bytesA.size(), '\x7f'), bytesA};
    for (size_t i = 0; !stop.load(); ++i) rewriteInPlace(paths.library, variants[i % 4]);
  });
  int loadedCount = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    const Lookup lookup = detail::loadEntry(paths, a.key);
    if (lookup.status == Lookup::Status::kLoaded) {
      ++loadedCount;
      // Only A's bytes match A's checksum, so a loaded module is A's code.
      EXPECT_EQ(valueOf(*lookup.module), 1);
    } else {
      ++refused;
      EXPECT_EQ(lookup.status, Lookup::Status::kCorrupt);
    }
  }
  stop = true;
  writer.join();
  EXPECT_EQ(loadedCount + refused, 300);
}

TEST(JitCacheSafety, FifoEntryIsRefusedWithoutHanging) {
  expectRebuildWithin(
      "fifo .so",
      [](const fs::path& so) {
        fs::remove(so);
        ASSERT_EQ(::mkfifo(so.c_str(), 0644), 0);
      },
      "is not a regular file");
  expectRebuildWithin(
      "fifo .meta",
      [](const fs::path& so) {
        fs::remove(metaOf(so));
        ASSERT_EQ(::mkfifo(metaOf(so).c_str(), 0644), 0);
      },
      "is not a regular file");
}

TEST(JitCacheSafety, EntryLinkedToDevZeroIsRefused) {
  // Read through, the link would grow a buffer without bound.
  expectRebuildWithin(
      "symlink to /dev/zero",
      [](const fs::path& so) {
        fs::remove(so);
        fs::create_symlink("/dev/zero", so);
      },
      "is a symbolic link");
  // A symlink to a valid copy of the entry is refused too: only the entry's own file counts.
  expectRebuildWithin(
      "symlink to a copy",
      [](const fs::path& so) {
        fs::copy_file(so, so.string() + ".copy");
        fs::remove(so);
        fs::create_symlink(so.string() + ".copy", so);
      },
      "is a symbolic link");
}

TEST(JitCacheSafety, OversizedEntryIsRefusedUnread) {
  expectRebuildWithin(
      "oversized",
      [](const fs::path& so) {
        // A sparse file: nothing is written, and nothing may be read.
        fs::resize_file(so, detail::kMaxLibraryBytes + 1);
        detail::EntryMeta meta = *detail::parseMeta(readText(metaOf(so)));
        meta.librarySize = detail::kMaxLibraryBytes + 1;
        writeText(metaOf(so), detail::formatMeta(meta));
      },
      "more than the limit");
}

TEST(JitCacheSafety, MissingCacheDirectoryIsCreated) {
  TempDir dir;
  const fs::path cache = dir.path() / "not" / "yet" / "there";
  const std::string source = dotSource(uniqueTag("missing dir"));
  {
    const CompileResult result = compile(source, optionsIn(cache));
    EXPECT_TRUE(result.cached);
    EXPECT_TRUE(result.note.empty()) << result.note;
    expectDotWorks(*result.module);
  }
  EXPECT_TRUE(compile(source, optionsIn(cache)).fromCache);
}

TEST(JitCacheSafety, ReadOnlyCacheStillServesItsValidEntries) {
  sparseflow::testing::withFilePermissions([] {
    TempDir dir;
    const std::string source = dotSource(uniqueTag("read-only hit"));
    fs::path library;
    {
      const CompileResult first = compile(source, optionsIn(dir.path()));
      library = first.libraryPath;
    }
    const auto readOnly = fs::perms::owner_read | fs::perms::owner_exec;
    fs::permissions(dir.path(), readOnly);
    fs::permissions(library.parent_path(), readOnly);
    const CompileResult hit = compile(source, optionsIn(dir.path()));
    EXPECT_TRUE(hit.fromCache) << hit.note;
    expectDotWorks(*hit.module);
    fs::permissions(library.parent_path(), fs::perms::owner_all);

    // A new kernel in that read-only cache compiles privately, and says so.
    const CompileResult miss =
        compile(dotSource(uniqueTag("read-only miss")), optionsIn(dir.path()));
    EXPECT_FALSE(miss.cached);
    EXPECT_NE(miss.note.find("compiled in a private temporary directory"), std::string::npos)
        << miss.note;
    expectDotWorks(*miss.module);
    fs::permissions(dir.path(), fs::perms::owner_all);
  });
}

TEST(JitCacheSafety, ReadRegularFileBoundsWhatItReads) {
  TempDir dir;
  writeText(dir.path() / "small", "12345");
  detail::FileRead read = detail::readRegularFile(dir.path() / "small", 5);
  EXPECT_EQ(read.status, detail::FileRead::Status::kRead);
  EXPECT_EQ(read.bytes, "12345");
  read = detail::readRegularFile(dir.path() / "small", 4);
  EXPECT_EQ(read.status, detail::FileRead::Status::kUnusable);
  EXPECT_NE(read.reason.find("more than the limit of 4"), std::string::npos) << read.reason;
  read = detail::readRegularFile(dir.path() / "absent", 4);
  EXPECT_EQ(read.status, detail::FileRead::Status::kMissing);
  read = detail::readRegularFile(dir.path(), 4);
  EXPECT_EQ(read.status, detail::FileRead::Status::kUnusable);
  EXPECT_NE(read.reason.find("is not a regular file"), std::string::npos) << read.reason;
}

}  // namespace
}  // namespace sparseflow::jit
