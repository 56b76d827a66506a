// The JIT: compile and run real OpenMP code, the disk cache (hits, keys, layout, corruption,
// read-only fallback), errors users can cause, and many threads and processes sharing one cache.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <latch>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jit/disk_cache.h"
#include "jit/jit.h"
#include "jit/sha256.h"
#include "sparseflow/error.h"
#include "unit/jit/jit_test_helpers.h"

extern char** environ;

namespace sparseflow::jit {
namespace {

TEST(JitSha256, KnownVectors) {
  EXPECT_EQ(sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256Hex(two.data(), two.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;  // fed in uneven pieces to exercise the buffering
  const std::string piece(997, 'a');
  size_t fed = 0;
  for (; fed + piece.size() <= 1000000; fed += piece.size()) million.update(piece);
  million.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(million.hexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(JitCache, DirectoryFollowsTheEnvironment) {
  // An explicit directory, then $SPARSEFLOW_CACHE_DIR, $XDG_CACHE_HOME/sparseflow and
  // $HOME/.cache/sparseflow; none of them: no directory (the JIT then uses a private one).
  EXPECT_EQ(detail::resolveCacheDir("/given"), fs::path("/given"));
  ScopedEnv sf("SPARSEFLOW_CACHE_DIR", "/sf"), xdg("XDG_CACHE_HOME", "/xdg"), home("HOME", "/h");
  EXPECT_EQ(detail::resolveCacheDir({}), fs::path("/sf"));
  {
    ScopedEnv none("SPARSEFLOW_CACHE_DIR", nullptr);
    EXPECT_EQ(detail::resolveCacheDir({}), fs::path("/xdg/sparseflow"));
    ScopedEnv empty("XDG_CACHE_HOME", "");
    EXPECT_EQ(detail::resolveCacheDir({}), fs::path("/h/.cache/sparseflow"));
    ScopedEnv noHome("HOME", nullptr);
    EXPECT_TRUE(detail::resolveCacheDir({}).empty());
  }
  EXPECT_EQ(detail::resolveCacheDir({}), fs::path("/sf"));
}

TEST(JitCache, MetaRoundTripAndKeys) {
  detail::EntryMeta meta;
  meta.key = std::string(64, 'a');
  meta.librarySha256 = std::string(64, 'b');
  meta.librarySize = 12345;
  meta.compilerIdentity = "/usr/bin/g++ | g++ 12";
  meta.flags = {"-O3", "-DX=a b"};
  meta.createdUnixSeconds = 1700000000;
  const auto parsed = detail::parseMeta(detail::formatMeta(meta));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->key, meta.key);
  EXPECT_EQ(parsed->librarySha256, meta.librarySha256);
  EXPECT_EQ(parsed->librarySize, meta.librarySize);
  EXPECT_EQ(parsed->flags, meta.flags);
  EXPECT_FALSE(detail::parseMeta("garbage\n").has_value());

  const std::string key = detail::cacheKey("src", "cc", {"-O3"});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, detail::cacheKey("src", "cc", {"-O3"}));
  EXPECT_NE(key, detail::cacheKey("src", "cc", {"-O2"}));
  EXPECT_NE(key, detail::cacheKey("src", "cc2", {"-O3"}));
  EXPECT_NE(key, detail::cacheKey("src2", "cc", {"-O3"}));
  EXPECT_NE(detail::cacheKey("s", "", {"-a", "b"}), detail::cacheKey("s", "", {"-ab"}));
}

TEST(Jit, CompilesRunsAndCaches) {
  TempDir dir;
  const std::string source = dotSource(uniqueTag("basic"));
  const CompilerOptions options = optionsIn(dir.path());
  CompileResult first = compile(source, options);
  EXPECT_FALSE(first.fromCache);
  EXPECT_TRUE(first.cached);
  EXPECT_TRUE(first.note.empty()) << first.note;
  ASSERT_TRUE(first.module);
  expectDotWorks(*first.module);

  // Layout: <cacheDir>/<2 hex>/<key>.{so,cpp,meta}, and no temporary file left behind.
  const fs::path shard = dir.path() / first.key.substr(0, 2);
  EXPECT_EQ(first.libraryPath, shard / (first.key + ".so"));
  EXPECT_TRUE(fs::is_regular_file(first.libraryPath));
  EXPECT_EQ(readText(shard / (first.key + ".cpp")), source);
  const std::string meta = readText(shard / (first.key + ".meta"));
  EXPECT_NE(meta.find("so-sha256 "), std::string::npos) << meta;
  EXPECT_NE(meta.find("flag -fopenmp"), std::string::npos) << meta;
  for (const auto& entry : fs::directory_iterator(shard)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name.ends_with(".so") || name.ends_with(".cpp") || name.ends_with(".meta") ||
                name.ends_with(".lock"))
        << name;
  }

  // While loaded: the same module from memory.
  CompileResult again = compile(source, options);
  EXPECT_TRUE(again.fromCache);
  EXPECT_EQ(again.module, first.module);

  // Released: loaded from disk, verified, and computes the same.
  first = {};
  again = {};
  CompileResult disk = compile(source, options);
  EXPECT_TRUE(disk.fromCache);
  EXPECT_TRUE(disk.note.empty()) << disk.note;
  expectDotWorks(*disk.module);
}

TEST(Jit, FlagsAndSourceChangeTheKey) {
  TempDir dir;
  const std::string source = dotSource(uniqueTag("flags"));
  CompilerOptions options = optionsIn(dir.path());
  const CompileResult o3 = compile(source, options);
  options.flags[0] = "-O2";
  const CompileResult o2 = compile(source, options);
  EXPECT_NE(o3.key, o2.key);
  EXPECT_FALSE(o2.fromCache);
  expectDotWorks(*o2.module);
  const CompileResult other = compile(source + "\n// changed\n", optionsIn(dir.path()));
  EXPECT_NE(other.key, o3.key);
}

TEST(Jit, SyntaxErrorReportsDiagnostics) {
  TempDir dir;
  const std::string source = "// " + uniqueTag("syntax") + "\nextern \"C\" int f() { return 1 }\n";
  std::string message;
  EXPECT_EQ(codeOf([&] { compile(source, optionsIn(dir.path())); }, &message),
            ErrorCode::kCompileError);
  EXPECT_NE(message.find("compiler failed (exit status"), std::string::npos) << message;
  EXPECT_NE(message.find("error: expected"), std::string::npos) << message;
  EXPECT_NE(message.find("-fopenmp"), std::string::npos) << message;
  const size_t kept = message.find("source kept at: ");
  ASSERT_NE(kept, std::string::npos) << message;
  const std::string keptPath = message.substr(kept + 16, message.find('\n', kept) - kept - 16);
  EXPECT_EQ(readText(keptPath), source);
}

TEST(Jit, UnresolvedSymbolFailsToLoadAndIsNotCached) {
  TempDir dir;
  const std::string source = "// " + uniqueTag("undefined") +
                             "\nextern \"C\" int sf_missing_function();\n"
                             "extern \"C\" int f() { return sf_missing_function(); }\n";
  std::string message;
  EXPECT_EQ(codeOf([&] { compile(source, optionsIn(dir.path())); }, &message),
            ErrorCode::kCompileError);
  EXPECT_NE(message.find("sf_missing_function"), std::string::npos) << message;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_FALSE(entry.path().string().ends_with(".so")) << entry.path();
    EXPECT_FALSE(entry.path().string().ends_with(".tmp")) << entry.path();
  }
}

TEST(Jit, MissingSymbolIsAClearError) {
  TempDir dir;
  const CompileResult result = compile(dotSource(uniqueTag("symbol")), optionsIn(dir.path()));
  std::string message;
  EXPECT_EQ(codeOf([&] { result.module->symbol("sf_not_there"); }, &message),
            ErrorCode::kCompileError);
  EXPECT_NE(message.find("'sf_not_there' not found in " + result.libraryPath.string()),
            std::string::npos)
      << message;
}

/// Compiles `source` into `dir`, damages the entry with `damage`, and expects a rebuild.
void expectRebuildAfter(const std::string& what, const std::function<void(const fs::path&)>& damage,
                        const std::string& noteFragment) {
  SCOPED_TRACE(what);
  TempDir dir;
  const std::string source = dotSource(uniqueTag(what));
  const CompilerOptions options = optionsIn(dir.path());
  fs::path library;
  {
    const CompileResult first = compile(source, options);
    library = first.libraryPath;
  }  // released: the registry no longer holds it, the next compile goes to disk
  damage(library);
  const CompileResult rebuilt = compile(source, options);
  EXPECT_FALSE(rebuilt.fromCache);
  EXPECT_NE(rebuilt.note.find("rebuilt a corrupt cache entry"), std::string::npos) << rebuilt.note;
  EXPECT_NE(rebuilt.note.find(noteFragment), std::string::npos) << rebuilt.note;
  expectDotWorks(*rebuilt.module);
  const CompileResult again = compile(source, options);
  EXPECT_TRUE(again.fromCache);
}

TEST(Jit, CorruptEntriesAreRebuilt) {
  expectRebuildAfter(
      "truncated", [](const fs::path& so) { fs::resize_file(so, fs::file_size(so) / 2); },
      "truncated");
  expectRebuildAfter(
      "checksum",
      [](const fs::path& so) {
        std::string meta = readText(metaOf(so));
        const size_t at = meta.find("so-sha256 ") + 10;
        meta[at] = meta[at] == '0' ? '1' : '0';
        writeText(metaOf(so), meta);
      },
      "checksum mismatch");
  expectRebuildAfter(
      "missing meta", [](const fs::path& so) { fs::remove(metaOf(so)); }, ".meta");
  // Garbage whose checksum .meta agrees with: only dlopen can tell.
  expectRebuildAfter(
      "garbage",
      [](const fs::path& so) {
        const std::string garbage(4096, '\x5a');
        writeText(so, garbage);
        detail::EntryMeta meta = *detail::parseMeta(readText(metaOf(so)));
        meta.librarySize = garbage.size();
        meta.librarySha256 = sha256Hex(garbage.data(), garbage.size());
        writeText(metaOf(so), detail::formatMeta(meta));
      },
      "dlopen failed");
}

TEST(Jit, EntryReplacedWhileLoadedIsNotServedStale) {
  // dlopen of a path that is already loaded returns the old handle; loads go through a fresh
  // name, so an entry replaced at the same path gives the new code while the old stays usable.
  TempDir dirA, dirB;
  const std::string tag = uniqueTag("stale");
  auto valueSource = [&](int value) {
    return "// " + tag + "\nextern \"C\" int sf_value() { return " + std::to_string(value) +
           "; }\n";
  };
  const CompileResult a = compile(valueSource(1), optionsIn(dirA.path()));
  const CompileResult b = compile(valueSource(2), optionsIn(dirB.path()));
  fs::copy_file(b.libraryPath, a.libraryPath.string() + ".new");
  fs::rename(a.libraryPath.string() + ".new", a.libraryPath);
  detail::EntryMeta meta = *detail::parseMeta(readText(metaOf(a.libraryPath)));
  const std::string bytes = readText(a.libraryPath);
  meta.librarySha256 = sha256Hex(bytes.data(), bytes.size());
  meta.librarySize = bytes.size();
  writeText(metaOf(a.libraryPath), detail::formatMeta(meta));

  const detail::Lookup lookup = detail::loadEntry(detail::entryPaths(dirA.path(), a.key), a.key);
  ASSERT_EQ(lookup.status, detail::Lookup::Status::kLoaded) << lookup.reason;
  EXPECT_EQ(lookup.module->function<int (*)()>("sf_value")(), 2);
  EXPECT_EQ(a.module->function<int (*)()>("sf_value")(), 1);
}

TEST(Jit, UnwritableCacheFallsBackToPrivateDirectory) {
  TempDir dir;
  writeText(dir.path() / "not-a-directory", "x");
  const std::string source = dotSource(uniqueTag("fallback"));
  CompileResult result = compile(source, optionsIn(dir.path() / "not-a-directory" / "cache"));
  EXPECT_FALSE(result.fromCache);
  EXPECT_FALSE(result.cached);
  EXPECT_NE(result.note.find("private temporary directory"), std::string::npos) << result.note;
  expectDotWorks(*result.module);
  const fs::path library = result.libraryPath;
  EXPECT_TRUE(fs::exists(library));
  result = {};
  EXPECT_FALSE(fs::exists(library)) << "the private directory goes with the module";

  if (::geteuid() != 0) {  // permissions do not stop root
    TempDir readOnly;
    fs::permissions(readOnly.path(), fs::perms::owner_read | fs::perms::owner_exec);
    const CompileResult ro = compile(dotSource(uniqueTag("read-only")), optionsIn(readOnly.path()));
    EXPECT_FALSE(ro.cached);
    expectDotWorks(*ro.module);
  }
}

TEST(Jit, UseCacheOffWritesNothingToTheCache) {
  TempDir dir;
  CompilerOptions options = optionsIn(dir.path());
  options.useCache = false;
  const std::string source = dotSource(uniqueTag("nocache"));
  const CompileResult a = compile(source, options);
  const CompileResult b = compile(source, options);
  EXPECT_FALSE(a.fromCache);
  EXPECT_FALSE(b.fromCache);
  EXPECT_NE(a.module, b.module);
  expectDotWorks(*b.module);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Jit, MissingCompilerSaysWhatWasConsulted) {
  TempDir dir;
  ScopedEnv cxx("SPARSEFLOW_CXX", "/nonexistent");
  std::string message;
  EXPECT_EQ(codeOf([&] { compile(dotSource("x"), optionsIn(dir.path())); }, &message),
            ErrorCode::kCompileError);
  for (const char* part : {"no C++ compiler found", "/nonexistent", "SPARSEFLOW_CXX", "$CXX",
                           "PATH", "hand-tuned kernels (2:4 linear) still work"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
  }
}

TEST(Jit, DebugPrintsTheCommandLine) {
  TempDir dir;
  ScopedEnv debug("SPARSEFLOW_DEBUG", "1");
  testing::internal::CaptureStderr();
  const CompileResult result = compile(dotSource(uniqueTag("debug")), optionsIn(dir.path()));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("sparseflow jit: "), std::string::npos) << err;
  EXPECT_NE(err.find("-fopenmp"), std::string::npos) << err;
  EXPECT_NE(err.find(result.key + ".cpp"), std::string::npos) << err;
}

TEST(Jit, ThreadsCompilingOneKeyCompileOnce) {
  TempDir dir;
  const std::string source = dotSource(uniqueTag("threads"));
  const CompilerOptions options = optionsIn(dir.path());
  constexpr int kThreads = 8;
  std::vector<CompileResult> results(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = compile(source, options);
    });
  }
  for (std::thread& thread : threads) thread.join();
  int compiled = 0;
  for (const CompileResult& result : results) {
    ASSERT_TRUE(result.module);
    compiled += result.fromCache ? 0 : 1;
    EXPECT_EQ(result.module, results[0].module);
    expectDotWorks(*result.module);
  }
  EXPECT_EQ(compiled, 1);
}

/// The body of each child process of ProcessesShareOneCache; alone, an ordinary compile test.
TEST(JitProcess, CompileIntoSharedCache) {
  const char* shared = std::getenv("SPARSEFLOW_JIT_TEST_CACHE");
  const char* report = std::getenv("SPARSEFLOW_JIT_TEST_REPORT");
  TempDir own;
  const CompileResult result = compile(dotSource("shared between processes"),
                                       optionsIn(shared ? fs::path(shared) : own.path()));
  expectDotWorks(*result.module);
  if (report != nullptr) writeText(report, result.fromCache ? "cache\n" : "compiled\n");
}

TEST(JitProcess, ProcessesShareOneCache) {
  TempDir dir;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.push_back("SPARSEFLOW_JIT_TEST_CACHE=" + dir.path().string());
    env.push_back("SPARSEFLOW_JIT_TEST_REPORT=" + (dir.path() / std::to_string(p)).string());
    std::vector<std::string> args{self, "--gtest_filter=JitProcess.CompileIntoSharedCache"};
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = (dir.path() / ("log" + std::to_string(p))).string();
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    ASSERT_EQ(::posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    children.push_back(pid);
  }
  int compiled = 0;
  for (int p = 0; p < kProcesses; ++p) {
    int status = 0;
    ASSERT_EQ(::waitpid(children[p], &status, 0), children[p]);
    const std::string log = readText(dir.path() / ("log" + std::to_string(p)));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
    const std::string outcome = readText(dir.path() / std::to_string(p));
    EXPECT_TRUE(outcome == "cache\n" || outcome == "compiled\n") << outcome << log;
    compiled += outcome == "compiled\n" ? 1 : 0;
  }
  // The per-key flock makes it one compile; correctness would not depend on it.
  EXPECT_GE(compiled, 1);
  EXPECT_LE(compiled, 1) << "the per-key lock should have avoided duplicate compiles";
  // Exactly one entry, valid, and no temporary file left behind.
  std::vector<std::string> entryFiles;
  for (const auto& file : fs::recursive_directory_iterator(dir.path())) {
    const std::string ext = file.path().extension().string();
    if (ext == ".so" || ext == ".meta" || ext == ".tmp" || ext == ".load") {
      entryFiles.push_back(file.path().filename().string());
    }
  }
  ASSERT_EQ(entryFiles.size(), 2u) << ::testing::PrintToString(entryFiles);
  const CompileResult probe = compile(dotSource("shared between processes"), optionsIn(dir.path()));
  const detail::Lookup lookup =
      detail::loadEntry(detail::entryPaths(dir.path(), probe.key), probe.key);
  EXPECT_EQ(lookup.status, detail::Lookup::Status::kLoaded) << lookup.reason;
  const CompileResult parent =
      compile(dotSource("shared between processes"), optionsIn(dir.path()));
  EXPECT_TRUE(parent.fromCache);
  expectDotWorks(*parent.module);
}

}  // namespace
}  // namespace sparseflow::jit
