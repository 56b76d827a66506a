// compile(): the in-process registry of loaded modules, the disk cache lookup under the per-key
// lock, the build and atomic publication of a new entry, and the private-directory fallback.
#include "jit/jit.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "jit/compiler_driver.h"
#include "jit/disk_cache.h"
#include "jit/sha256.h"
#include "support/check.h"

namespace sparseflow::jit {
namespace {

using detail::CacheWriteError;
using detail::EntryPaths;
using detail::Lookup;
using detail::ResolvedCompiler;

/// Modules loaded by this process, by key: the source of truth while a module is alive, so a live
/// key never goes back to disk (and never meets a stale dlopen handle). Entries are weak: a module
/// is dlclosed when its users drop it.
class Registry {
 public:
  struct Slot {
    std::weak_ptr<const Module> module;
    bool cached = false;
    std::shared_ptr<std::mutex> building = std::make_shared<std::mutex>();
  };

  static Registry& instance() {
    static Registry registry;  // function-local: safe to use from other static initializers
    return registry;
  }

  /// The live module for `key`, else the mutex that serializes its build in this process.
  std::shared_ptr<const Module> find(const std::string& key, bool* cached,
                                     std::shared_ptr<std::mutex>* building) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[key];
    if (auto module = slot.module.lock()) {
      *cached = slot.cached;
      return module;
    }
    if (building != nullptr) *building = slot.building;
    return nullptr;
  }

  void publish(const std::string& key, const std::shared_ptr<const Module>& module, bool cached) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slots_[key];
    slot.module = module;
    slot.cached = cached;
    if (slots_.size() > 2 * liveAfterPrune_ + 64) prune();
  }

 private:
  /// Drops slots whose module is gone and whose build mutex nobody else holds a reference to.
  void prune() {
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (it->second.module.expired() && it->second.building.use_count() == 1) {
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
    liveAfterPrune_ = slots_.size();
  }

  std::mutex mutex_;
  std::unordered_map<std::string, Slot> slots_;
  size_t liveAfterPrune_ = 0;
};

/// Compiles into a private directory under the system temp dir, deleted when the module goes
/// (kept, with the source, when the compile fails so the user can read it).
std::shared_ptr<const Module> buildPrivate(const std::string& source, const std::string& key,
                                           const ResolvedCompiler& compiler,
                                           const std::vector<std::string>& flags,
                                           std::filesystem::path* libraryPath) {
  std::error_code ec;
  std::filesystem::path tempDir = std::filesystem::temp_directory_path(ec);
  if (ec) tempDir = "/tmp";
  std::string pattern = (tempDir / "sparseflow-jit-XXXXXX").string();
  SF_CHECK_CODE(::mkdtemp(pattern.data()) != nullptr, ErrorCode::kCompileError)
      << "JIT: cannot create a private directory in " << tempDir.string();
  const std::filesystem::path dir = pattern;
  const std::filesystem::path sourcePath = dir / (key + ".cpp");
  const std::filesystem::path library = dir / (key + ".so");
  try {
    detail::writeFileAtomically(sourcePath, source);
  } catch (const CacheWriteError& e) {
    SF_FAIL(kCompileError) << "JIT: " << e.what();
  }
  detail::runCompiler(compiler, flags, sourcePath, library, sourcePath);
  *libraryPath = library;
  std::string bytes;
  try {
    bytes = detail::readFileBytes(library);
  } catch (const CacheWriteError& e) {
    SF_FAIL(kCompileError) << "JIT: " << e.what();
  }
  return Module::load(bytes, library, dir);
}

/// Builds into the cache: source published first (atomically, compiled from there so diagnostics
/// name it), object compiled into a unique temporary file, read once (bounded), hashed, fsynced
/// and loaded from those bytes, then .meta and finally the .so renamed into place. Called under
/// the exclusive key lock.
std::shared_ptr<const Module> buildInCache(const std::string& source, const std::string& key,
                                           const ResolvedCompiler& compiler,
                                           const std::vector<std::string>& flags,
                                           const EntryPaths& paths) {
  detail::writeFileAtomically(paths.source, source);
  const std::filesystem::path temp = detail::createUniqueFile(paths.dir, key, ".tmp");
  struct RemoveTemp {
    const std::filesystem::path& path;
    bool keep = false;
    ~RemoveTemp() {
      if (!keep) ::unlink(path.c_str());
    }
  } removeTemp{temp};

  detail::runCompiler(compiler, flags, paths.source, temp, paths.source);
  const std::string bytes = detail::readFileBytes(temp);
  detail::syncPath(temp);
  // Loading the bytes that will be hashed validates the object before anyone else can see it.
  std::shared_ptr<const Module> module;
  try {
    module = Module::load(bytes, paths.library);
  } catch (const Error& e) {
    SF_FAIL(kCompileError) << e.what() << "\nsource kept at: " << paths.source.string();
  }

  detail::EntryMeta meta;
  meta.key = key;
  meta.librarySha256 = sha256Hex(bytes.data(), bytes.size());
  meta.librarySize = bytes.size();
  meta.compilerIdentity = compiler.identity;
  meta.flags = flags;
  meta.createdUnixSeconds = static_cast<int64_t>(std::time(nullptr));
  try {
    detail::writeFileAtomically(paths.meta, detail::formatMeta(meta));
    detail::renameFile(temp, paths.library);
    removeTemp.keep = true;
    detail::syncPath(paths.dir);
  } catch (const CacheWriteError&) {
    // The module is loaded and valid; only its publication failed. A half-published entry (meta
    // without .so) reads as missing or corrupt and is rebuilt by the next compile.
  }
  return module;
}

/// The disk path of compile(): lookup under a shared lock, then lookup-or-build under an
/// exclusive one, then the private fallback when the cache cannot be written.
CompileResult compileWithDiskCache(const std::string& source, const std::string& key,
                                   const ResolvedCompiler& compiler,
                                   const CompilerOptions& options) {
  CompileResult result;
  result.key = key;
  const std::filesystem::path cacheDir = detail::resolveCacheDir(options.cacheDir);
  std::string problem;
  if (cacheDir.empty()) {
    problem = "no cache directory ($SPARSEFLOW_CACHE_DIR, $XDG_CACHE_HOME and $HOME are unset)";
  } else {
    const EntryPaths paths = detail::entryPaths(cacheDir, key);
    std::error_code ec;
    std::filesystem::create_directories(paths.dir, ec);
    if (ec && !std::filesystem::is_directory(paths.dir)) {
      problem = "cannot create " + paths.dir.string() + ": " + ec.message();
    } else {
      detail::KeyLock lock(paths.lock);
      lock.shared();
      Lookup lookup = detail::loadEntry(paths, key);
      if (lookup.status != Lookup::Status::kLoaded) {
        lock.exclusive();  // another process may have built it while we waited: look again
        lookup = detail::loadEntry(paths, key);
      }
      if (lookup.status == Lookup::Status::kLoaded) {
        result.module = std::move(lookup.module);
        result.fromCache = true;
        result.cached = true;
        result.libraryPath = paths.library;
        return result;
      }
      if (lookup.status == Lookup::Status::kCorrupt) {
        result.note = "rebuilt a corrupt cache entry (" + lookup.reason + ")";
        if (detail::debugLevel() >= 1) std::cerr << "sparseflow jit: " << result.note << "\n";
        detail::removeEntry(paths);
      }
      try {
        result.module = buildInCache(source, key, compiler, options.flags, paths);
        result.cached = true;
        result.libraryPath = paths.library;
        return result;
      } catch (const CacheWriteError& e) {
        problem = e.what();
      }
    }
  }
  if (!result.note.empty()) result.note += "; ";
  result.note += "cache directory not usable (" + problem +
                 "): compiled in a private temporary directory instead";
  result.module = buildPrivate(source, key, compiler, options.flags, &result.libraryPath);
  return result;
}

}  // namespace

CompilerOptions defaultCompilerOptions() {
  CompilerOptions options;
  options.flags = {"-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=c++17"};
  return options;
}

CompileResult compile(const std::string& source, const CompilerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](CompileResult result) {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  const ResolvedCompiler compiler = detail::resolveCompiler(options.compiler);
  const std::string key = detail::cacheKey(source, compiler.identity, options.flags);

  if (!options.useCache) {
    CompileResult result;
    result.key = key;
    result.note = "useCache is off: compiled in a private temporary directory";
    result.module = buildPrivate(source, key, compiler, options.flags, &result.libraryPath);
    return finish(std::move(result));
  }

  Registry& registry = Registry::instance();
  auto fromMemory = [&](std::shared_ptr<const Module> module, bool cached) {
    CompileResult result;
    result.key = key;
    result.fromCache = true;
    result.cached = cached;
    result.libraryPath = module->libraryPath();
    if (!cached) {
      result.note =
          "reused a module this process compiled in a private temporary directory "
          "(not in the disk cache)";
    }
    result.module = std::move(module);
    return finish(std::move(result));
  };
  bool cached = false;
  std::shared_ptr<std::mutex> building;
  if (auto module = registry.find(key, &cached, &building)) return fromMemory(module, cached);
  // One build per key in this process; the others wait here and then find the module.
  std::lock_guard<std::mutex> buildLock(*building);
  if (auto module = registry.find(key, &cached, nullptr)) return fromMemory(module, cached);
  CompileResult result = compileWithDiskCache(source, key, compiler, options);
  registry.publish(key, result.module, result.cached);
  return finish(std::move(result));
}

}  // namespace sparseflow::jit
