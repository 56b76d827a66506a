// Schedules through the C++ API: the text form and its errors, the Schedule builder, decompose (a
// kernel in parts, which `sparseflow opt` does not lower), Kernel::ir() after the default
// transforms, and the pipeline's refusal to run GPU-bound loops. The loop IR each primitive gives,
// and its refusals (races, collisions, nesting, unknown loops), are exact text-in/text-out pairs
// (docs/compiler.md, "Text in, text out"): the schedule stage's in tests/lit/schedule, the stage-I
// directives that lowering applies (reorder, sparse_reorder, sparse_fuse, a parallel() replacing
// the default parallel loop) in tests/lit/lower, and the C++ they become (`#pragma GCC unroll`,
// the split sums, the guarded `schedule(dynamic, ...)` loop) in tests/lit/codegen. Results under
// each schedule are checked against the float64 reference in tests/e2e.
#include <gtest/gtest.h>

#include <cstdlib>

#include "schedule/schedule.h"
#include "sparseflow/error.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

/// The loop IR after the stage `stopAfter` (empty: compiled, C++ compiler included).
std::string irOf(const std::string& text, const std::map<std::string, std::string>& formats,
                 const std::string& schedule, const std::string& stopAfter = "") {
  KernelOptions options;
  options.formats = formats;
  options.schedule = schedule;
  options.stopAfter = stopAfter;
  return Kernel::compile(text, options).ir();
}

/// The error compiling `text` under `schedule` up to C++ (the stages that can refuse a schedule;
/// no C++ compiler runs).
std::string errorOf(const std::string& text, const std::map<std::string, std::string>& formats,
                    const std::string& schedule, ErrorCode code = ErrorCode::kInvalidArgument) {
  try {
    irOf(text, formats, schedule, "codegen");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for schedule " << schedule;
  return "";
}

const char* kSpmv = "y(i) = A(i,j) * x(j)";

TEST(ScheduleText, ParsesAndPrintsBack) {
  const std::string text =
      "split(i, i0, i1, 64); parallel(i0); vectorize(j); unroll(k, 4); "
      "reorder(i0, k, i1); fuse(a, b, c); parallel(k, atomic)";
  const auto s = schedule::Schedule::parse(text);
  EXPECT_EQ(s.toString(), text);
  EXPECT_EQ(schedule::Schedule::parse(s.toString()).toString(), text);
  EXPECT_TRUE(schedule::hasParallel(s));
  EXPECT_EQ(schedule::requestedOrder(s), (std::vector<std::string>{"i0", "k", "i1"}));
  EXPECT_TRUE(schedule::Schedule::parse("  ").empty());
}

TEST(ScheduleCpp, TheBuilderWritesTheTextAndCompilesTheSame) {
  const Schedule built = Schedule()
                             .split("i", "i0", "i1", 8)
                             .parallel("i0")
                             .unroll("j", 2)
                             .vectorize("k")
                             .reorder({"i", "k", "j"})
                             .fuse("a", "b", "c")
                             .parallel("k", true)
                             .precompute("y", "i")
                             .sparseReorder("A", {"j", "i"})
                             .sparseFuse("A", {"i", "j"})
                             .decompose("A", 4)
                             .bind("i", "blockIdx.x");
  EXPECT_EQ(built.toString(),
            "split(i, i0, i1, 8); parallel(i0); unroll(j, 2); vectorize(k); reorder(i, k, j); "
            "fuse(a, b, c); parallel(k, atomic); precompute(y, i); sparse_reorder(A, j, i); "
            "sparse_fuse(A, i, j); decompose(A, 4); bind(i, blockIdx.x)");
  // What the parser reads back is what was built.
  EXPECT_EQ(Schedule::parse(built.toString()).toString(), built.toString());
  // A kernel scheduled from C++ is the kernel scheduled from the same text.
  KernelOptions cpp, text;
  cpp.formats = text.formats = {{"A", "csr"}};
  cpp.schedule = Schedule().split("i", "i0", "i1", 8).parallel("i0").unroll("j", 2);
  text.schedule = "split(i, i0, i1, 8); parallel(i0); unroll(j, 2)";
  EXPECT_EQ(Kernel::compile(kSpmv, cpp).ir(), Kernel::compile(kSpmv, text).ir());
  EXPECT_NE(Kernel::compile(kSpmv, cpp).ir().find("for v_i0 in"), std::string::npos);
  // Arguments are checked as they are added.
  EXPECT_THROW(Schedule().split("i", "i0", "i1", 0), Error);
  EXPECT_THROW(Schedule().unroll("j", -2), Error);
  EXPECT_THROW(Schedule().decompose("A", 0), Error);
  EXPECT_TRUE(Schedule().empty());
  EXPECT_TRUE(Schedule("").empty());
}

TEST(ScheduleText, TextIsParsedAtTheEdgeIntoTypedDirectives) {
  // The text becomes directives when it is assigned (one Schedule type, no text carried inward).
  const Schedule s = "split(i, i0, i1, 64);  parallel(i0, atomic)";
  ASSERT_EQ(s.directives().size(), 2u);
  EXPECT_EQ(s.directives()[0].primitive, SchedulePrimitive::kSplit);
  EXPECT_EQ(s.directives()[0].loops, (std::vector<std::string>{"i", "i0", "i1"}));
  EXPECT_EQ(s.directives()[0].factor, 64);
  EXPECT_EQ(s.directives()[0].column, 1);
  EXPECT_EQ(s.directives()[1].primitive, SchedulePrimitive::kParallel);
  EXPECT_TRUE(s.directives()[1].atomic);
  EXPECT_EQ(s.directives()[1].column, 24);
  EXPECT_EQ(s.toString(), "split(i, i0, i1, 64); parallel(i0, atomic)");
  // A mistake is reported where the text enters, before any kernel compiles.
  KernelOptions options;
  try {
    options.schedule = "paralel(i)";
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParseError);
    EXPECT_NE(std::string(e.what()).find("schedule, column 1"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(options.schedule.empty());
}

TEST(ScheduleText, ErrorsGiveTheColumn) {
  struct Bad {
    std::string text, message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"split(i, i0, i1)", "column 16: expected more arguments"},
           {"split(i, i0, i1, 0)", "column 18: expected a factor for split (positive)"},
           {"paralel(i)", "column 1: expected a primitive"},
           {"parallel(i) vectorize(j)", "column 13: expected ';'"},
           {"parallel(i, j)", "column 1: expected parallel(loop) or parallel(loop, atomic)"},
           {"unroll(j, x)", "column 11: expected a factor"},
           {"vectorize(", "column 11: expected a loop name"},
           {"precompute(y)", "column 13: expected more arguments: precompute takes 2"},
       }) {
    try {
      Schedule::parse(b.text);
      ADD_FAILURE() << "no error for " << b.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParseError);
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos)
          << b.text << " -> " << e.what();
    }
  }
}

TEST(DefaultSchedule, IrIsTheLoopIrAsCompiled) {
  // Kernel::ir() is the loop IR after the default transforms: the SpMV row sum split into four
  // partial sums (tests/lit/default-transforms/spmv_split_accumulators, and the C++ it becomes in
  // tests/lit/codegen/spmv_split_accumulators). Generated code: the csr_spmm provider would run
  // this SpMV otherwise.
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.handTuned = false;
  EXPECT_NE(Kernel::compile(kSpmv, options).ir().find("acc0_p1"), std::string::npos);
}

TEST(SchedulePrimitives, DecomposeRunsOneKernelPerPart) {
  // A bound as csr, run as hyb:3: an ELL kernel, then a COO kernel adding into the same y; the
  // rest of the schedule applies to each part.
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "decompose(A, 3); split(i, i0, i1, 4)");
  const size_t ell = ir.find("# part 0 of A (ell:3): y(i) = sum(j, A(i,j) * x(j))");
  const size_t coo = ir.find("# part 1 of A (coo): y(i) += sum(j, A(i,j) * x(j))");
  ASSERT_NE(ell, std::string::npos) << ir;
  ASSERT_NE(coo, std::string::npos) << ir;
  EXPECT_LT(ell, coo);
  EXPECT_NE(ir.find("(p0_0_0 * 3)"), std::string::npos) << ir;  // ELL rows of width 3
  EXPECT_NE(ir.find("for v_i0 in"), std::string::npos) << ir;   // the split, in the ELL part
  EXPECT_NE(
      errorOf(kSpmv, {{"A", "csr"}}, "decompose(x, 3)").find("hybrid formats are for matrices"),
      std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "decompose(y, 3)").find("not an input"),
            std::string::npos);
  EXPECT_NE(errorOf("y(i) = sum(j, exp(A(i,j)) * x(j))", {{"A", "csr"}}, "decompose(A, 3)",
                    ErrorCode::kNotSupported)
                .find("linear"),
            std::string::npos);
}

TEST(SchedulePrimitives, BoundLoopsAreRefusedByTheCppBackend) {
  // The bound loops (tests/lit/schedule/bind_gpu, and bind's refusals beside it) need the CUDA
  // backend: the pipeline's codegen stage refuses them and shows the scheduled IR, where bind
  // replaced the default CPU-parallel loop.
  const std::string e = errorOf(kSpmv, {{"A", "csr"}},
                                "split(i, i0, i1, 16); bind(i0, blockIdx.x); bind(i1, threadIdx.x)",
                                ErrorCode::kNotSupported);
  EXPECT_NE(e.find("CUDA backend"), std::string::npos) << e;
  EXPECT_NE(
      e.find("for v_i0 in [0, (((v_i_end - v_i_begin) + 15) / 16)) bind(blockIdx.x) disjoint:"),
      std::string::npos)
      << e;
  EXPECT_EQ(e.find("parallel"), std::string::npos) << "bind replaces the default CPU loop: " << e;
}

}  // namespace
}  // namespace sparseflow
