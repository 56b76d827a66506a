// The C ABI's compiled kernels and the JIT cache: missing, unwritable or read-only cache
// directories still compile and run (and the description says what happened to the cache), a
// truncated entry is rebuilt, and processes compiling one kernel into one empty cache all succeed
// and leave exactly one valid entry.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "capi/capi_test_helpers.h"
#include "common/unprivileged.h"

extern char** environ;

namespace sparseflow_capi_test {
namespace {

namespace fs = std::filesystem;

struct KernelDeleter {
  void operator()(SparseFlowKernel* k) const { sparseflow_kernel_destroy(k); }
};
using KernelPtr = std::unique_ptr<SparseFlowKernel, KernelDeleter>;

/// A fresh directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sparseflow-capi-cache-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(path_, ec)) {
      if (entry.is_directory())
        fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// SPARSEFLOW_CACHE_DIR for one scope (these tests run no other threads meanwhile).
class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const fs::path& dir) {
    const char* old = std::getenv("SPARSEFLOW_CACHE_DIR");
    if (old != nullptr) old_ = old;
    ::setenv("SPARSEFLOW_CACHE_DIR", dir.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old_.empty()) {
      ::unsetenv("SPARSEFLOW_CACHE_DIR");
    } else {
      ::setenv("SPARSEFLOW_CACHE_DIR", old_.c_str(), 1);
    }
  }

 private:
  std::string old_;
};

/// y(i) = A(i,j) * x(j) with tensor names made from `tag` (so that no other test of this process
/// has compiled the same source), A bound as CSR, generated code.
KernelPtr compileSpmv(SparseFlowContext* context, const std::string& tag) {
  const std::string a = "A" + tag, x = "x" + tag;
  // `(x(j) + 0)`: a spelling no hand-tuned provider takes, so generated code is JIT-compiled.
  const std::string text = "y(i) = " + a + "(i,j) * (" + x + "(j) + 0)";
  const std::string formats = a + "=csr";
  SparseFlowKernel* raw = nullptr;
  EXPECT_EQ(
      sparseflow_kernel_compile(context, text.c_str(), formats.c_str(), nullptr, nullptr, &raw),
      SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  return KernelPtr(raw);
}

/// Runs the kernel of compileSpmv on SmallMatrix and a fixed x; true when it matches float64.
bool spmvMatches(SparseFlowContext* context, const SparseFlowKernel* kernel,
                 const std::string& tag) {
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  if (sparseflow_tensor_create_csr(context, SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                   SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                   m.values.data(), 7, &raw) != SPARSEFLOW_STATUS_OK) {
    return false;
  }
  const TensorPtr A(raw);
  const std::vector<float> x = {1, -2, 0.5f, 4, -1, 3};
  const int64_t shape[1] = {6};
  if (sparseflow_tensor_create_dense(context, SPARSEFLOW_DTYPE_F32, 1, shape, x.data(), 6, &raw) !=
      SPARSEFLOW_STATUS_OK) {
    return false;
  }
  const TensorPtr X(raw);
  const std::string a = "A" + tag, xName = "x" + tag;
  const char* names[2] = {a.c_str(), xName.c_str()};
  const SparseFlowTensor* tensors[2] = {A.get(), X.get()};
  if (sparseflow_kernel_run(context, kernel, names, tensors, 2, nullptr, nullptr, 0, &raw) !=
      SPARSEFLOW_STATUS_OK) {
    ADD_FAILURE() << sparseflow_last_error();
    return false;
  }
  const TensorPtr y(raw);
  const std::vector<double> got = denseOf(y.get()), dense = m.dense();
  bool ok = got.size() == 4;
  for (int64_t i = 0; ok && i < 4; ++i) {
    double want = 0;
    for (int64_t j = 0; j < 6; ++j) want += dense[i * 6 + j] * x[j];
    ok = std::abs(got[i] - want) <= 1e-6;
  }
  return ok;
}

std::string descriptionOf(const SparseFlowKernel* kernel) {
  size_t size = 0;
  EXPECT_EQ(sparseflow_kernel_get_description(kernel, nullptr, 0, &size), SPARSEFLOW_STATUS_OK);
  std::string text(size, '\0');
  EXPECT_EQ(sparseflow_kernel_get_description(kernel, text.data(), size, nullptr),
            SPARSEFLOW_STATUS_OK);
  text.resize(size - 1);
  return text;
}

/// The entry files under a cache directory, by extension.
std::map<std::string, int> entryFiles(const fs::path& cache) {
  std::map<std::string, int> count;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(cache, ec)) {
    if (entry.is_regular_file()) ++count[entry.path().extension().string()];
  }
  return count;
}

TEST(CapiKernelCache, MissingCacheDirectoryIsCreated) {
  TempDir dir;
  const fs::path cache = dir.path() / "new" / "cache";
  const ScopedCacheDir scoped(cache);
  ContextPtr context = makeContext(1);
  KernelPtr kernel = compileSpmv(context.get(), "Missing");
  ASSERT_TRUE(kernel);
  EXPECT_TRUE(spmvMatches(context.get(), kernel.get(), "Missing"));
  const std::string description = descriptionOf(kernel.get());
  EXPECT_NE(description.find("compiled: now, " + cache.string()), std::string::npos) << description;
  EXPECT_EQ(description.find("cache:"), std::string::npos) << description;
  EXPECT_EQ(entryFiles(cache)[".so"], 1);
}

TEST(CapiKernelCache, UnwritableCacheDirectoryCompilesAndSaysSo) {
  TempDir dir;
  std::ofstream(dir.path() / "a-file") << "x";
  const ScopedCacheDir scoped(dir.path() / "a-file" / "cache");
  ContextPtr context = makeContext(1);
  KernelPtr kernel = compileSpmv(context.get(), "Unwritable");
  ASSERT_TRUE(kernel);
  EXPECT_TRUE(spmvMatches(context.get(), kernel.get(), "Unwritable"));
  const std::string description = descriptionOf(kernel.get());
  EXPECT_NE(description.find("cache: cache directory not usable"), std::string::npos)
      << description;
  EXPECT_NE(description.find("compiled in a private temporary directory"), std::string::npos)
      << description;
}

TEST(CapiKernelCache, ReadOnlyCacheDirectoryCompilesAndSaysSo) {
  sparseflow::testing::withFilePermissions([] {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
    const ScopedCacheDir scoped(dir.path());
    ContextPtr context = makeContext(1);
    KernelPtr kernel = compileSpmv(context.get(), "ReadOnly");
    ASSERT_TRUE(kernel);
    EXPECT_TRUE(spmvMatches(context.get(), kernel.get(), "ReadOnly"));
    EXPECT_NE(descriptionOf(kernel.get()).find("compiled in a private temporary directory"),
              std::string::npos);
    EXPECT_TRUE(entryFiles(dir.path()).empty()) << "nothing written to a read-only cache";
    fs::permissions(dir.path(), fs::perms::owner_all);
  });
}

TEST(CapiKernelCache, TruncatedEntryIsRebuiltAndSaysSo) {
  TempDir dir;
  const ScopedCacheDir scoped(dir.path());
  ContextPtr context = makeContext(1);
  fs::path library;
  {
    KernelPtr first = compileSpmv(context.get(), "Truncated");
    ASSERT_TRUE(first);
  }  // destroyed: the module is unloaded, the next compile reads the disk
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    if (entry.path().extension() == ".so") library = entry.path();
  }
  ASSERT_FALSE(library.empty());
  fs::resize_file(library, fs::file_size(library) / 2);
  KernelPtr rebuilt = compileSpmv(context.get(), "Truncated");
  ASSERT_TRUE(rebuilt);
  const std::string description = descriptionOf(rebuilt.get());
  EXPECT_NE(description.find("cache: rebuilt a corrupt cache entry"), std::string::npos)
      << description;
  EXPECT_NE(description.find("truncated"), std::string::npos) << description;
  EXPECT_TRUE(spmvMatches(context.get(), rebuilt.get(), "Truncated"));
  rebuilt.reset();
  KernelPtr again = compileSpmv(context.get(), "Truncated");
  EXPECT_NE(descriptionOf(again.get()).find("compiled: from cache"), std::string::npos);
}

/// The body of each child of ProcessesCompilingOneKernel; alone, an ordinary compile-and-run test.
TEST(CapiKernelCacheChild, CompileRunAndReport) {
  ContextPtr context = makeContext(1);
  KernelPtr kernel = compileSpmv(context.get(), "Shared");
  ASSERT_TRUE(kernel);
  const bool ok = spmvMatches(context.get(), kernel.get(), "Shared");
  EXPECT_TRUE(ok);
  if (const char* report = std::getenv("SPARSEFLOW_CAPI_TEST_REPORT")) {
    std::ofstream(report) << (ok ? "ok\n" : "wrong\n");
  }
}

TEST(CapiKernelCache, ProcessesCompilingOneKernel) {
  TempDir dir;
  const fs::path cache = dir.path() / "cache";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::string(*e).rfind("SPARSEFLOW_CACHE_DIR=", 0) != 0) env.emplace_back(*e);
    }
    env.push_back("SPARSEFLOW_CACHE_DIR=" + cache.string());
    env.push_back("SPARSEFLOW_CAPI_TEST_REPORT=" + (dir.path() / std::to_string(p)).string());
    std::vector<std::string> args{self, "--gtest_filter=CapiKernelCacheChild.CompileRunAndReport"};
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
  for (int p = 0; p < kProcesses; ++p) {
    int status = 0;
    ASSERT_EQ(::waitpid(children[p], &status, 0), children[p]);
    std::ifstream logFile(dir.path() / ("log" + std::to_string(p)));
    std::stringstream log;
    log << logFile.rdbuf();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log.str();
    std::ifstream report(dir.path() / std::to_string(p));
    std::string outcome;
    std::getline(report, outcome);
    EXPECT_EQ(outcome, "ok") << log.str();
  }
  // Exactly one entry: its .so, .meta, .cpp and .lock, and no temporary file.
  const std::map<std::string, int> files = entryFiles(cache);
  EXPECT_EQ(files,
            (std::map<std::string, int>{{".cpp", 1}, {".lock", 1}, {".meta", 1}, {".so", 1}}));
  // And it is valid: this process loads it from the cache.
  const ScopedCacheDir scoped(cache);
  ContextPtr context = makeContext(1);
  KernelPtr kernel = compileSpmv(context.get(), "Shared");
  ASSERT_TRUE(kernel);
  EXPECT_NE(descriptionOf(kernel.get()).find("compiled: from cache"), std::string::npos)
      << descriptionOf(kernel.get());
  EXPECT_TRUE(spmvMatches(context.get(), kernel.get(), "Shared"));
}

}  // namespace
}  // namespace sparseflow_capi_test
