// Schedule primitives: the text form, the loop IR each one prints, and the refusals (races,
// collisions, storage-order conflicts). Results under each schedule are checked against the
// float64 reference in tests/e2e.
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

std::string irOf(const std::string& text, const std::map<std::string, std::string>& formats,
                 const std::string& schedule) {
  KernelOptions options;
  options.formats = formats;
  options.schedule = schedule;
  return Kernel::compile(text, options).ir();
}

std::string errorOf(const std::string& text, const std::map<std::string, std::string>& formats,
                    const std::string& schedule, ErrorCode code = ErrorCode::kInvalidArgument) {
  try {
    irOf(text, formats, schedule);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for schedule " << schedule;
  return "";
}

const char* kSpmv = "y(i) = A(i,j) * x(j)";
const char* kSpmm = "C(i,j) = A(i,k) * B(k,j)";

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

TEST(DefaultSchedule, GeneratedCodeSplitsSumsAndForksOnlyForEnoughWork) {
  // The C++-only default passes: the row sum of an SpMV over a compressed level in four partial
  // sums, and every parallel region guarded by the inputs' entry count.
  // (Generated code: the csr_spmm provider would run this SpMV otherwise.)
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.handTuned = false;
  const std::string source = Kernel::compile(kSpmv, options).source();
  EXPECT_NE(source.find("acc0_p1 += "), std::string::npos) << source;
  EXPECT_NE(source.find("acc0 += ((acc0_p1 + acc0_p2) + acc0_p3)"), std::string::npos) << source;
  EXPECT_NE(source.find("schedule(dynamic, sf_chunk("), std::string::npos) << source;
  EXPECT_NE(source.find(" if(sf_parallel)"), std::string::npos) << source;
  EXPECT_NE(source.find("sf_extents[2] >= SF_PARALLEL_MIN_WORK"), std::string::npos) << source;
  // ir() is the loop IR as compiled: the split sums are in it.
  EXPECT_NE(Kernel::compile(kSpmv, options).ir().find("acc0_p1"), std::string::npos);
}

TEST(SchedulePrimitives, DefaultIsParallelOuterLoop) {
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "");
  EXPECT_NE(ir.find("for v_i in [0, n_i) parallel disjoint:"), std::string::npos) << ir;
}

TEST(SchedulePrimitives, SplitMakesTwoLoopsAndParallelGoesOuter) {
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "split(i, i0, i1, 64); parallel(i0)");
  EXPECT_NE(ir.find("for v_i0 in [0, (((v_i_end - v_i_begin) + 63) / 64)) parallel disjoint:"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("for v_i1 in [0, min(64, (v_i_end - (v_i_begin + (v_i0 * 64))))) disjoint:"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("let v_i: int64_t = ((v_i_begin + (v_i0 * 64)) + v_i1)"), std::string::npos)
      << ir;
}

TEST(SchedulePrimitives, ParallelReductionIsPrivatized) {
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "parallel(j)");
  EXPECT_NE(ir.find("parallel reduce(acc0)  # j:"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("for v_i in [0, n_i) parallel"), std::string::npos) << ir;
}

TEST(SchedulePrimitives, ParallelThatRacesIsRefusedUnlessAtomic) {
  const char* transposed = "y(j) = A(i,j) * x(i)";
  const std::string e = errorOf(transposed, {{"A", "csr"}}, "parallel(i)");
  EXPECT_NE(e.find("parallel(i) would race"), std::string::npos) << e;
  EXPECT_NE(e.find("parallel(i, atomic)"), std::string::npos) << e;
  const std::string ir = irOf(transposed, {{"A", "csr"}}, "parallel(i, atomic)");
  EXPECT_NE(ir.find("for v_i in [0, n_i) parallel atomic:"), std::string::npos) << ir;
  // COO's row level repeats coordinates: its rows are not disjoint either.
  EXPECT_NE(errorOf(kSpmv, {{"A", "coo"}}, "parallel(i)").find("would race"), std::string::npos);
}

TEST(SchedulePrimitives, NestedParallelIsRefused) {
  const std::string e = errorOf(kSpmm, {{"A", "csr"}}, "parallel(i); parallel(j)");
  EXPECT_NE(e.find("nested with another parallel loop"), std::string::npos) << e;
}

TEST(SchedulePrimitives, ReorderFollowsTheRequestAndRespectsStorage) {
  const std::string ir = irOf(kSpmm, {{"A", "csr"}}, "reorder(i, j, k)");
  const auto j = ir.find("for v_j in"), k = ir.find("let v_k");
  ASSERT_NE(j, std::string::npos) << ir;
  EXPECT_LT(j, k) << ir;
  const std::string e = errorOf(kSpmv, {{"A", "csr"}}, "reorder(j, i)");
  EXPECT_NE(e.find("conflicts with the storage order"), std::string::npos) << e;
  EXPECT_NE(e.find("A (csr) walks i j"), std::string::npos) << e;
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "reorder(i, q)").find("no loop named 'q'"),
            std::string::npos);
  // No sparse operand: the conflict is the max reduction's own rule.
  const std::string max = errorOf("y(i) = max(j, A(j,i))", {}, "reorder(j, i)");
  EXPECT_NE(max.find("reorder(j, i) conflicts with the rule that a max reduction keeps its "
                     "reduced loops innermost"),
            std::string::npos)
      << max;
}

TEST(SchedulePrimitives, SparseReorderReadsACopyInTheRequestedLevelOrder) {
  // reorder(j, i) alone contradicts csr; sparse_reorder(A, j, i) first reads A with j outermost.
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "sparse_reorder(A, j, i); reorder(j, i)");
  const auto j = ir.find("for v_j in [0, n_j)"), i = ir.find("let v_i");
  ASSERT_NE(j, std::string::npos) << ir;
  EXPECT_LT(j, i) << ir;
  EXPECT_NE(ir.find("tA_crd1"), std::string::npos) << ir;  // rows are now A's compressed level
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "sparse_reorder(A, j, k)").find("name each index of A"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "sparse_reorder(x, j, i)").find("x is dense"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "bsr:2x2"}}, "sparse_reorder(A, j, i)", ErrorCode::kNotSupported)
                .find("blocked"),
            std::string::npos);
}

TEST(SchedulePrimitives, SparseFuseWalksTheEntriesInOneLoop) {
  // One loop over A's entries (a coordinate copy); its rows repeat, so parallel needs atomics.
  const std::string ir = irOf(kSpmv, {{"A", "csr"}}, "sparse_fuse(A, i, j); parallel(i, atomic)");
  EXPECT_NE(ir.find("in [int64_t(tA_pos0[0]), int64_t(tA_pos0[1])) parallel atomic"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("let v_j: int64_t = int64_t(tA_crd1["), std::string::npos) << ir;
  EXPECT_EQ(ir.find("for v_i in [0, n_i)"), std::string::npos) << ir;  // no loop over rows
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "sparse_fuse(A, i, j); parallel(i)").find("race"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "bsr:2x2"}}, "sparse_fuse(A, i, j)", ErrorCode::kNotSupported)
                .find("blocked"),
            std::string::npos);
}

TEST(SchedulePrimitives, VectorizeInnerDenseLoopButNotAScatter) {
  const std::string ir = irOf(kSpmm, {{"A", "csr"}}, "vectorize(j)");
  EXPECT_NE(ir.find("for v_j in [0, n_j) vectorized disjoint:"), std::string::npos) << ir;
  const std::string e = errorOf("y(j) = A(i,j) * x(i)", {{"A", "csr"}}, "vectorize(j)");
  EXPECT_NE(e.find("scatter through an index array"), std::string::npos) << e;
  EXPECT_NE(errorOf(kSpmm, {{"A", "csr"}}, "vectorize(i)").find("only an innermost loop"),
            std::string::npos);
}

TEST(SchedulePrimitives, UnrollAnnotates) {
  const std::string ir = irOf(kSpmm, {{"A", "csr"}}, "unroll(j, 4)");
  EXPECT_NE(ir.find("for v_j in [0, n_j) unrolled(4) disjoint:"), std::string::npos) << ir;
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.schedule = "unroll(j, 4)";
  EXPECT_NE(Kernel::compile(kSpmm, options).source().find("#pragma GCC unroll 4"),
            std::string::npos);
}

TEST(SchedulePrimitives, FuseDenseLoopsOnly) {
  const std::string ir = irOf("C(i,j) = A(i,j) * B(i,j)", {}, "fuse(i, j, f)");
  EXPECT_NE(ir.find("for v_f in [0, (n_i * v_f_inner)) parallel disjoint:"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("let v_i: int64_t = (v_f / v_f_inner)"), std::string::npos) << ir;
  const std::string e = errorOf("C(i,j) = A(i,j) * B(i,j)", {{"A", "csr"}}, "fuse(i, j, f)");
  EXPECT_NE(e.find("bounds of j depend on i"), std::string::npos) << e;
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "fuse(i, j, f)").find("not perfectly nested"),
            std::string::npos);
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

TEST(SchedulePrimitives, BindAnnotatesLoopsForTheGpuBackend) {
  // Rows over blocks of 16 threads: the loops carry their axes in the printed IR; the C++
  // backend refuses to run them and shows that IR.
  const std::string e = errorOf(kSpmv, {{"A", "csr"}},
                                "split(i, i0, i1, 16); bind(i0, blockIdx.x); bind(i1, threadIdx.x)",
                                ErrorCode::kNotSupported);
  EXPECT_NE(e.find("CUDA backend"), std::string::npos) << e;
  const size_t block =
      e.find("for v_i0 in [0, (((v_i_end - v_i_begin) + 15) / 16)) bind(blockIdx.x) disjoint:");
  const size_t thread = e.find("  for v_i1 in [0, min(16, ");
  EXPECT_NE(e.find("(v_i0 * 16))))) bind(threadIdx.x) disjoint:"), std::string::npos) << e;
  EXPECT_NE(block, std::string::npos) << e;
  EXPECT_NE(thread, std::string::npos) << e;
  EXPECT_LT(block, thread) << e;
  EXPECT_EQ(e.find("parallel"), std::string::npos) << "bind replaces the default CPU loop: " << e;
  // Refusals: a reduction loop, an unknown axis, blocks inside threads, one axis twice.
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "bind(j, threadIdx.x)").find("would race"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}}, "bind(i, warp.x)").find("the axis must be"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmv, {{"A", "csr"}},
                    "split(i, i0, i1, 16); bind(i0, threadIdx.x); bind(i1, blockIdx.x)")
                .find("blocks go outside threads"),
            std::string::npos);
  EXPECT_NE(errorOf(kSpmm, {{"A", "csr"}}, "bind(i, threadIdx.x); bind(j, threadIdx.x)")
                .find("are both bound to threadIdx.x"),
            std::string::npos);
  // Not mixed with CPU-parallel loops, around or inside.
  EXPECT_NE(
      errorOf(kSpmv, {{"A", "csr"}}, "split(i, i0, i1, 16); parallel(i0); bind(i1, threadIdx.x)")
          .find("is inside CPU-parallel loop i0"),
      std::string::npos);
  EXPECT_NE(errorOf(kSpmm, {{"A", "csr"}}, "parallel(j); bind(i, blockIdx.x)")
                .find("CPU-parallel loop j is inside loop i, bound to blockIdx.x"),
            std::string::npos);
}

TEST(SchedulePrimitives, PrecomputePrivatizesTheScatteredSums) {
  // Transposed SpMV: rows of A scatter into y, so parallel(i) alone races; through a per-thread
  // workspace it does not, and the workspaces are added into y one thread at a time.
  const char* transposed = "y(j) = A(i,j) * x(i)";
  const std::string ir = irOf(transposed, {{"A", "csr"}}, "precompute(y, i); parallel(i)");
  EXPECT_NE(ir.find("allocate ws_ty_vals: float[n_j] zeroed per thread:\n"
                    "  for v_i in [0, n_i) parallel into(ws_ty_vals):"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("ws_ty_vals[p0_2_0] += (tA_vals[q0_0_1] * tx_vals[p0_1_0])"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("  for v_ws_ty_vals in [0, n_j) critical:\n"
                    "    ty_vals[v_ws_ty_vals] += ws_ty_vals[v_ws_ty_vals]"),
            std::string::npos)
      << ir;
  EXPECT_EQ(ir.find("atomic"), std::string::npos) << ir;
  // Inside a split, the inner loop's workspace is per iteration of the parallel outer loop.
  const std::string split =
      irOf(transposed, {{"A", "csr"}}, "split(i, i0, i1, 64); precompute(y, i1); parallel(i0)");
  EXPECT_LT(split.find("parallel:"), split.find("allocate ws_ty_vals"));
  EXPECT_NE(split.find("for v_i1 in"), std::string::npos);
  EXPECT_NE(split.find("into(ws_ty_vals)"), std::string::npos) << split;
}

TEST(SchedulePrimitives, PrecomputeRefusals) {
  const char* transposed = "y(j) = A(i,j) * x(i)";
  EXPECT_NE(errorOf(transposed, {{"A", "csr"}}, "precompute(x, i)").find("x is not a dense output"),
            std::string::npos);
  EXPECT_NE(errorOf(transposed, {{"A", "csr"}}, "precompute(y, q)").find("no loop named 'q'"),
            std::string::npos);
  EXPECT_NE(errorOf("y(i) = max(j, A(j,i))", {}, "precompute(y, j)").find("does not update y"),
            std::string::npos);
  // A sparse output (SDDMM shares M's pattern) has no dense shape to copy.
  EXPECT_NE(errorOf("Y(i,j) = M(i,j) * sum(k, A(i,k) * B(j,k))", {{"M", "csr"}, {"Y", "csr"}},
                    "precompute(Y, i)")
                .find("output is sparse"),
            std::string::npos);
  // Twice on one loop.
  EXPECT_NE(errorOf(transposed, {{"A", "csr"}}, "precompute(y, i); precompute(y, i)")
                .find("already adds into workspace ws_ty_vals"),
            std::string::npos);
  EXPECT_NE(errorOf(transposed, {{"A", "csr"}}, "precompute(y)", ErrorCode::kParseError)
                .find("precompute takes 2"),
            std::string::npos);
}

TEST(SchedulePrimitives, UnknownLoopNamesTheLoops) {
  const std::string e = errorOf(kSpmv, {{"A", "csr"}}, "parallel(q)");
  EXPECT_NE(e.find("no loop named 'q' (the loops are: i, j)"), std::string::npos) << e;
}

}  // namespace
}  // namespace sparseflow
