// Helpers of the JIT tests: temporary cache directories, environment overrides, a small OpenMP
// kernel with its float64 check, and file access for damaging cache entries.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "jit/jit.h"
#include "sparseflow/error.h"

namespace sparseflow::jit {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sparseflow-jit-test-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Sets an environment variable for one scope (tests that call it run no threads meanwhile).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    hadOld_ = old != nullptr;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (hadOld_) {
      ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool hadOld_ = false;
};

/// An OpenMP-parallel dot product with a float64 accumulator; `tag` makes the source (and key)
/// unique so that tests never share a key by accident.
inline std::string dotSource(const std::string& tag) {
  return "// test kernel " + tag + R"(
#include <omp.h>
extern "C" double sf_dot(const float* a, const float* b, long n) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (long i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}
extern "C" int sf_max_threads() { return omp_get_max_threads(); }
)";
}

inline std::string uniqueTag(const std::string& name) {
  std::random_device device;
  return name + " " + std::to_string(::getpid()) + " " + std::to_string(device()) + " " +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

inline CompilerOptions optionsIn(const fs::path& cacheDir) {
  CompilerOptions options = defaultCompilerOptions();
  options.cacheDir = cacheDir;
  return options;
}

/// Calls sf_dot on random data and compares with a float64 reference.
inline void expectDotWorks(const Module& module, uint64_t seed = 7) {
  using DotFn = double (*)(const float*, const float*, long);
  const auto dot = module.function<DotFn>("sf_dot");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const long n = 100003;
  std::vector<float> a(n), b(n);
  double reference = 0;
  for (long i = 0; i < n; ++i) {
    a[i] = value(rng);
    b[i] = value(rng);
    reference += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  }
  EXPECT_NEAR(dot(a.data(), b.data(), n), reference, 1e-9 * n);
  EXPECT_GE(module.function<int (*)()>("sf_max_threads")(), 1);
}

inline std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline ErrorCode codeOf(const std::function<void()>& f, std::string* message) {
  try {
    f();
  } catch (const Error& e) {
    *message = e.what();
    return e.code();
  }
  return ErrorCode::kOk;
}

/// The .meta beside a cache entry's .so.
inline fs::path metaOf(const fs::path& library) {
  fs::path meta = library;
  return meta.replace_extension(".meta");
}

}  // namespace sparseflow::jit
