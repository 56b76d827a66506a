// The pipeline's stages as users see them: every stage printed under its header in order,
// stopping after any stage (and then needing no C++ compiler), ir() showing the IR compiled.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sparseflow/error.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

const std::vector<std::string> kStages = {"parse",           "check",    "canonicalize",
                                          "lower",           "schedule", "default-transforms",
                                          "select-provider", "codegen",  "jit"};

/// The stage headers of a pass log, in order.
std::vector<std::string> headers(const std::string& log) {
  std::vector<std::string> out;
  const std::string mark = "// ----- after ";
  for (size_t at = log.find(mark); at != std::string::npos; at = log.find(mark, at + 1)) {
    const size_t end = log.find(" -----", at + mark.size());
    out.push_back(log.substr(at + mark.size(), end - at - mark.size()));
  }
  return out;
}

TEST(PipelineStages, PrintAfterAllShowsEveryStageInOrder) {
  for (const auto& [text, format, provider] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", "csr", "csr_spmm"},
           {"C(i,j) = exp(A(i,k)) * B(i,j)", "csr", "generated"}}) {
    KernelOptions options;
    options.formats = {{"A", format}};
    options.printAfterAll = true;
    const Kernel kernel = Kernel::compile(text, options);
    EXPECT_EQ(headers(kernel.passLog()), kStages) << kernel.passLog();
    EXPECT_EQ(kernel.provider(), provider);
    EXPECT_NE(kernel.passLog().find("provider: " + provider + "\n"), std::string::npos);
    // Each stage's printed form is there: the parsed text, the checked formats, the IR.
    EXPECT_NE(kernel.passLog().find("tensor A: csr f32\n"), std::string::npos) << kernel.passLog();
    EXPECT_NE(kernel.passLog().find("for v_i in [0, n_i)"), std::string::npos);
  }
  KernelOptions plain;
  plain.formats = {{"A", "csr"}};
  const Kernel quiet = Kernel::compile("y(i) = A(i,j) * x(j)", plain);
  EXPECT_TRUE(quiet.passLog().empty());
}

TEST(PipelineStages, StopAfterAnyStagePrintsButDoesNotRun) {
  for (size_t s = 0; s + 1 < kStages.size(); ++s) {
    SCOPED_TRACE(kStages[s]);
    KernelOptions options;
    options.formats = {{"A", "csr"}};
    options.handTuned = false;
    options.stopAfter = kStages[s];
    options.printAfterAll = true;
    const Kernel kernel = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
    const std::vector<std::string> want(kStages.begin(),
                                        kStages.begin() + static_cast<long>(s) + 1);
    EXPECT_EQ(headers(kernel.passLog()), want);
    EXPECT_EQ(kernel.ir().empty(), s < 3) << "the IR exists from 'lower' on";
    EXPECT_EQ(kernel.source().empty(), s < 7) << "the C++ exists from 'codegen' on";
    try {
      kernel.run({});
      FAIL() << "a kernel stopped after '" << kStages[s] << "' ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("compiled only up to the stage '" + kStages[s] + "'"),
                std::string::npos)
          << e.what();
    }
  }
  KernelOptions bad;
  bad.stopAfter = "emit";
  try {
    Kernel::compile("y(i) = A(i,j) * x(j)", bad);
    FAIL() << "an unknown stage was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pipeline stage 'emit'; the stages are parse, "
                                         "check, canonicalize, lower"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineStages, EmittingCppNeedsNoCompiler) {
  // With no working C++ compiler, stopping after codegen still gives the C++; the JIT fails.
  const char* saved = std::getenv("SPARSEFLOW_CXX");
  const std::string restore = saved ? saved : "";
  ASSERT_EQ(setenv("SPARSEFLOW_CXX", "/nonexistent/c++", 1), 0);
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.useCache = false;
  options.stopAfter = "codegen";
  const Kernel kernel = Kernel::compile("C(i,j) = sqrt(A(i,k)) * B(k,j) + 0.5", options);
  EXPECT_NE(kernel.source().find("sf_kernel"), std::string::npos) << kernel.source();
  options.stopAfter.clear();
  EXPECT_THROW(Kernel::compile("C(i,j) = sqrt(A(i,k)) * B(k,j) + 0.5", options), Error);
  if (saved) {
    setenv("SPARSEFLOW_CXX", restore.c_str(), 1);
  } else {
    unsetenv("SPARSEFLOW_CXX");
  }
}

TEST(PipelineStages, TheIrIsTheOneCompiled) {
  // The default transforms version the SpMM's inner width: ir() shows that IR, as compiled.
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.handTuned = false;
  const Kernel kernel = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  EXPECT_NE(kernel.ir().find("if (n_j == 16)"), std::string::npos) << kernel.ir();
  EXPECT_EQ(kernel.provider(), "generated");
}

}  // namespace
}  // namespace sparseflow
