// The JIT: compiles generated C++ source with the system compiler into a shared object, caches it
// on disk (safe for many threads and processes), and loads it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace sparseflow::jit {

/// How to compile. Start from defaultCompilerOptions() and change what you need.
struct CompilerOptions {
  /// Compiler to run; empty: $SPARSEFLOW_CXX, else $CXX, else "c++" found on PATH. May hold a
  /// launcher prefix ("ccache g++"): words are split on whitespace, never given to a shell.
  std::string compiler;
  /// Flags, in order, before the source file; part of the cache key.
  std::vector<std::string> flags;
  /// Cache directory; empty: $SPARSEFLOW_CACHE_DIR, else $XDG_CACHE_HOME/sparseflow, else
  /// $HOME/.cache/sparseflow.
  std::filesystem::path cacheDir;
  /// false: compile in a private temporary directory, use neither the disk cache nor modules that
  /// this process already loaded.
  bool useCache = true;
};

/// {"-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-std=c++17"}, the rest empty.
CompilerOptions defaultCompilerOptions();

namespace detail {
class SealedImage;
}

/// A loaded shared object; dlclose when the last shared_ptr to it goes. Function pointers taken
/// from it are valid only while a shared_ptr to it lives.
class Module {
 public:
  /// dlopens `bytes` (a shared object the caller has verified) from a private sealed copy in
  /// memory (detail::SealedImage), never from a file another process could rewrite while it is
  /// mapped. `libraryPath` is what messages name (the cache entry), `removeOnClose` a private
  /// directory deleted after dlclose (empty: none). Throws Error(kCompileError) with dlerror()
  /// when the object cannot be loaded.
  static std::shared_ptr<const Module> load(const std::string& bytes,
                                            std::filesystem::path libraryPath,
                                            std::filesystem::path removeOnClose = {});
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The address of `name`; throws Error(kCompileError) naming the symbol and library if missing.
  void* symbol(const std::string& name) const;

  /// The function `name` as a pointer of type Fn, e.g. `function<double (*)(const float*, int)>`.
  /// The signature is the caller's promise: nothing checks it.
  template <typename Fn>
  Fn function(const std::string& name) const {
    static_assert(std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>,
                  "Module::function needs a function pointer type");
    return reinterpret_cast<Fn>(symbol(name));
  }

  /// The cache entry (or private file) this module was loaded from.
  const std::filesystem::path& libraryPath() const { return libraryPath_; }

 private:
  Module(void* handle, std::unique_ptr<detail::SealedImage> image,
         std::filesystem::path libraryPath, std::filesystem::path removeOnClose);

  void* handle_;
  std::unique_ptr<detail::SealedImage> image_;  ///< the bytes dlopen mapped, alive while loaded
  std::filesystem::path libraryPath_;
  std::filesystem::path removeOnClose_;
};

/// What compile() did.
struct CompileResult {
  std::shared_ptr<const Module> module;
  /// true: nothing was compiled (found loaded in this process or valid on disk).
  bool fromCache = false;
  /// Wall time of compile() itself.
  double seconds = 0;
  /// The cache key: 64 hex digits of SHA-256 over source, compiler identity and flags.
  std::string key;
  /// Where the shared object is: `<cacheDir>/<key[0:2]>/<key>.so`, or a private temporary file
  /// that is deleted when the module goes (when `cached` is false).
  std::filesystem::path libraryPath;
  /// true: the shared object is in the disk cache; false: compiled in a private temporary
  /// directory (useCache off, or the cache directory could not be created or written).
  bool cached = false;
  /// Anything unusual, for logs: why the cache was bypassed, or why an entry was rebuilt
  /// ("rebuilt: checksum mismatch ..."). Empty when all went the ordinary way.
  std::string note;
};

/// Compiles `source` (or finds it in the cache) and loads it. Thread-safe: concurrent calls with
/// the same key compile once. Throws Error(kCompileError) when no compiler is found, the
/// compiler fails (the message holds the command line, exit status, the first 40 lines of
/// diagnostics and the kept source file) or the result cannot be loaded.
CompileResult compile(const std::string& source, const CompilerOptions& options);

}  // namespace sparseflow::jit
