// Property tests of schedules on kernels with epilogues and several loop nests: any schedule
// either is refused with a user error (kInvalidArgument / kNotSupported naming the directive) or
// gives loop IR that the C++ emitter accepts (every name declared once where it is visible,
// ir/verify.h) and, compiled and run, the float64 reference's result. Random schedules come from a
// fixed seed (SPARSEFLOW_SCHEDULE_SEED picks another, SPARSEFLOW_SCHEDULE_COUNT how many,
// SPARSEFLOW_SCHEDULE_VERBOSE=1 prints every refusal); a failure prints the kernel, formats and
// schedule to reproduce it with `sparseflow run`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "codegen/c/emit_cpp.h"
#include "e2e/e2e_inputs.h"
#include "ir/visitor.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "sparseflow/build.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

struct ScheduledKernel {
  std::string text;
  std::map<std::string, std::string> formats;
  std::map<std::string, int64_t> extents;
};

// Several nests (a reduction under a function is precomputed by a nest of its own; a sum of
// reducing terms is one nest per term), fused epilogues, sparse and blocked drivers, a scatter.
const std::vector<ScheduledKernel>& kernels() {
  static const std::vector<ScheduledKernel> list = {
      {"C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))",
       {{"A", "csr"}},
       {{"i", 37}, {"k", 23}, {"j", 9}}},
      {"C(i,j) = gelu(sum(k, A(i,k) * B(k,j))) + sum(l, D(i,l) * E(l,j))",
       {{"A", "csr"}},
       {{"i", 21}, {"k", 17}, {"l", 5}, {"j", 6}}},
      {"y(i) = sigmoid(sum(j, A(i,j) * x(j))) - tanh(b(i))",
       {{"A", "bsr:2x2"}},
       {{"i", 29}, {"j", 31}}},
      {"Y(i,j) = M(i,j) * silu(sum(k, X(i,k) * Z(j,k)))",
       {{"M", "csr"}},
       {{"i", 19}, {"j", 23}, {"k", 7}}},
      {"y(j) = relu(sum(i, A(i,j) * x(i)) + b(j))", {{"A", "csr"}}, {{"i", 41}, {"j", 27}}},
      {"C(i,j) = gelu_tanh(sum(k, A(i,k) * B(k,j))) + b(i)", {}, {{"i", 13}, {"k", 11}, {"j", 7}}},
      {"y(i) = max(j, A(i,j) * x(j)) + relu(sum(k, A(i,k) * x(k)))",
       {{"A", "csr"}},
       {{"i", 33}, {"j", 25}, {"k", 25}}},
  };
  return list;
}

std::string describe(const ScheduledKernel& k, const std::string& schedule) {
  std::string text = "kernel \"" + k.text + "\"";
  for (const auto& [name, format] : k.formats) text += " --format " + name + "=" + format;
  return text + " --schedule \"" + schedule + "\"";
}

/// The loop labels of a lowered body (what directives name).
std::vector<std::string> loopLabels(const ir::Stmt& body) {
  struct Labels : ir::Visitor {
    std::set<std::string> found;
    void visitFor(const ir::For& f) override {
      if (!f.notes.label.empty()) found.insert(f.notes.label);
      ir::Visitor::visitFor(f);
    }
  } labels;
  labels.visit(body);
  return {labels.found.begin(), labels.found.end()};
}

lower::LoweredKernel lowerWith(const ScheduledKernel& k, const schedule::Schedule& sched) {
  const expr::Statement s = expr::parse(k.text);
  std::map<std::string, expr::TensorInfo> infos;
  for (const auto& [name, indices] : testing::inputIndices(k.text))
    infos[name] = {std::vector<int64_t>(indices.size(), 1), DType::kF32};
  lower::LowerOptions options;
  for (const auto& [name, format] : k.formats)
    options.formats[name] =
        Format::parse(format, static_cast<int32_t>(infos.at(name).shape.size()));
  options.parallel = !schedule::hasParallel(sched);
  options.order = schedule::requestedOrder(sched);
  return lower::lowerKernel(expr::check(s, infos), options);
}

/// A random schedule of 1-4 directives over the kernel's loops: splits and fuses make new loop
/// names that later directives may use; now and then a name is reused or made up, to exercise
/// the refusals.
std::string randomSchedule(const ScheduledKernel& k, std::mt19937_64& rng) {
  const schedule::Schedule none;
  const std::vector<std::string> original = loopLabels(lowerWith(k, none).body);
  std::vector<std::string> labels = original;
  const std::string output = expr::parse(k.text).lhs.tensor;
  auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const int count = std::uniform_int_distribution<int>(1, 4)(rng);
  std::string text;
  int fresh = 0;
  for (int d = 0; d < count && !labels.empty(); ++d) {
    const std::string loop = chance(0.05) ? "nope" : pick(labels);
    auto newName = [&](const std::string& base) {
      return chance(0.05) ? pick(labels) : base + std::to_string(fresh++);
    };
    std::string directive;
    switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
      case 0:
      case 1: {
        const std::string outer = newName(loop + "o"), inner = newName(loop + "i");
        const int factor =
            std::vector<int>{1, 2, 3, 8, 64}[std::uniform_int_distribution<size_t>(0, 4)(rng)];
        directive =
            "split(" + loop + ", " + outer + ", " + inner + ", " + std::to_string(factor) + ")";
        labels.push_back(outer);
        labels.push_back(inner);
        break;
      }
      case 2: directive = "parallel(" + loop + (chance(0.3) ? ", atomic)" : ")"); break;
      case 3: directive = "vectorize(" + loop + ")"; break;
      case 4: directive = "unroll(" + loop + ", " + (chance(0.5) ? "2" : "4") + ")"; break;
      case 5: {
        const std::string fused = newName("f");
        directive = "fuse(" + loop + ", " + pick(labels) + ", " + fused + ")";
        labels.push_back(fused);
        break;
      }
      case 6: directive = "precompute(" + output + ", " + loop + ")"; break;
      default: {
        std::vector<std::string> order = original;  // lowering honours it: the kernel's loops
        std::shuffle(order.begin(), order.end(), rng);
        order.resize(std::min<size_t>(order.size(), 3));
        directive = "reorder(";
        for (size_t o = 0; o < order.size(); ++o) directive += (o ? ", " : "") + order[o];
        directive += ")";
      }
    }
    text += (text.empty() ? "" : "; ") + directive;
  }
  return text;
}

/// The kernel's output, dense (what precompute() may redirect).
std::vector<schedule::DenseOutput> denseOutput(const ScheduledKernel& k) {
  const expr::Statement s = expr::parse(k.text);
  ir::Expr size = ir::intImm(1);
  for (const std::string& index : s.lhs.indices)
    size = ir::mul(size, ir::var(lower::extentName(index), ir::ScalarType::kI64));
  return {{s.lhs.tensor, {lower::valuesName(s.lhs.tensor), ir::ScalarType::kF32}, size}};
}

uint64_t seed() {
  const char* env = std::getenv("SPARSEFLOW_SCHEDULE_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20240612;
}

int count(int fallback) {
  const char* env = std::getenv("SPARSEFLOW_SCHEDULE_COUNT");
  return env ? std::atoi(env) : fallback;
}

/// Refusals are user errors, never internal ones or compiler failures.
void expectUserError(const Error& e, const std::string& what) {
  EXPECT_TRUE(e.code() == ErrorCode::kInvalidArgument || e.code() == ErrorCode::kNotSupported)
      << what << ": " << errorCodeName(e.code()) << ": " << e.what();
}

// The README's example: a split of i applies to both nests of the fused epilogue kernel, each of
// which declares the split's bounds (v_i_begin, v_i_end); the generated C++ failed to compile
// ("redeclaration of v_i_begin") when nested blocks were flattened into one scope.
TEST(ScheduleProperty, SplitOfTheEpilogueKernelCompilesAndRuns) {
  for (const std::string schedule :
       {"split(i, i0, i1, 64); parallel(i0)", "split(i, i0, i1, 4); split(j, j0, j1, 2)",
        "split(i, i0, i1, 8); split(i1, i2, i3, 2); parallel(i0); vectorize(j)"}) {
    SCOPED_TRACE(schedule);
    const ScheduledKernel& k = kernels()[0];
    KernelOptions options;
    options.formats = k.formats;
    options.schedule = schedule;
    const Kernel kernel = Kernel::compile(k.text, options);
    std::mt19937_64 rng(7);
    const testing::KernelInputs in =
        testing::randomInputs(k.text, k.formats, k.extents, 0.3, {}, rng);
    const std::vector<double> got = toDense(kernel.run(in.pointers()));
    EXPECT_EQ(testing::countMismatches(got, testing::referenceOf(k.text, in), 1e-5), 0)
        << kernel.ir();
  }
}

TEST(ScheduleProperty, NewLoopNamesMustBeNewInTheWholeKernel) {
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  // i0 names the outer loop of the first split already (in both nests).
  options.schedule = "split(i, i0, i1, 4); split(j, i0, j1, 2)";
  try {
    Kernel::compile(kernels()[0].text, options);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(
                  "split(j, i0, j1, 2): the loop name 'i0' is already used in the kernel"),
              std::string::npos)
        << e.what();
  }
  // A loop name whose variable would be the split's bound: v_i_begin.
  options.schedule = "split(i, i_begin, i1, 4)";
  try {
    Kernel::compile(kernels()[0].text, options);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("the name 'v_i_begin' it would declare is already used"),
              std::string::npos)
        << e.what();
  }
}

// Many schedules, no system compiler: each is refused with a user error or reaches the C++ emitter,
// which checks the scoping rules of its IR (and throws kInternal when they are broken).
TEST(ScheduleProperty, RandomSchedulesGiveWellScopedCode) {
  std::mt19937_64 rng(seed());
  int emitted = 0, refused = 0;
  const int total = count(3000);
  for (int n = 0; n < total; ++n) {
    const ScheduledKernel& k = kernels()[static_cast<size_t>(n) % kernels().size()];
    const std::string text = randomSchedule(k, rng);
    SCOPED_TRACE(describe(k, text));
    try {
      const schedule::Schedule sched = schedule::Schedule::parse(text);
      lower::LoweredKernel lowered = lowerWith(k, sched);
      lowered.body = schedule::applySchedule(lowered.body, sched, denseOutput(k));
      lowered.body = schedule::specializeExtents(schedule::splitAccumulators(lowered.body));
      EXPECT_NE(codegen::emitCpp(lowered).find("sf_kernel_main"), std::string::npos);
      ++emitted;
    } catch (const Error& e) {
      expectUserError(e, "refused");
      if (std::getenv("SPARSEFLOW_SCHEDULE_VERBOSE"))
        std::printf("%s\n  %s\n", describe(k, text).c_str(), e.what());
      ++refused;
    }
  }
  // Not a vacuous property: a good share of the schedules are legal.
  EXPECT_GT(emitted, total / 10) << emitted << " emitted, " << refused << " refused";
}

// Fewer, compiled and run: the legal ones must compute what the unscheduled kernel computes.
TEST(ScheduleProperty, RandomSchedulesMatchTheReference) {
  std::mt19937_64 rng(seed() + 1);
  int ran = 0;
  const int total = count(3000) / 60;
  for (int n = 0; n < total; ++n) {
    const ScheduledKernel& k = kernels()[static_cast<size_t>(n) % kernels().size()];
    const std::string text = randomSchedule(k, rng);
    SCOPED_TRACE(describe(k, text));
    KernelOptions options;
    options.formats = k.formats;
    options.schedule = text;
    std::optional<Kernel> kernel;
    try {
      kernel = Kernel::compile(k.text, options);
    } catch (const Error& e) {
      expectUserError(e, "refused");
      continue;
    }
    const testing::KernelInputs in =
        testing::randomInputs(k.text, k.formats, k.extents, 0.3, {}, rng);
    const std::vector<double> got = toDense(kernel->run(in.pointers()));
    EXPECT_EQ(testing::countMismatches(got, testing::referenceOf(k.text, in), 1e-5), 0)
        << kernel->ir();
    ++ran;
  }
  EXPECT_GT(ran, total / 10) << "too few legal schedules to say anything";
}

}  // namespace
}  // namespace sparseflow
