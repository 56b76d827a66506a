// lower/driver_plan.h and lower/loop_order.h: which inputs drive loops, are co-iterated, read as
// dense or through a copy (with the notes users see), and the loop order that follows from the
// formats, including the refusal of an order the storage cannot give.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/ir.h"
#include "lower/driver_plan.h"
#include "lower/loop_order.h"
#include "lower/lower.h"
#include "lower/normalize.h"
#include "pipeline/stages.h"
#include "sparseflow/error.h"

namespace sparseflow::lower {
namespace {

using FormatNames = std::map<std::string, std::string>;

pipeline::CheckedStage checkedForDriverTest(const std::string& kernel, const FormatNames& formats,
                                            const std::string& schedule = "") {
  KernelOptions options;
  options.formats = formats;
  options.schedule = Schedule::parse(schedule);
  return pipeline::checkStage(expr::parse(kernel), options);
}

DriverPlan planForDriverTest(const std::string& kernel, const FormatNames& formats) {
  const pipeline::CheckedStage stage = checkedForDriverTest(kernel, formats);
  const Normalized normalized = normalize(stage.checked);
  return planDrivers(stage.checked, normalized, stage.lowerOptions.formats);
}

LoweredKernel lowerForDriverTest(const std::string& kernel, const FormatNames& formats,
                                 const std::string& schedule = "") {
  const pipeline::CheckedStage stage = checkedForDriverTest(kernel, formats, schedule);
  return lowerKernel(stage.checked, stage.lowerOptions);
}

/// Each input's format as the plan reads it, "dense (densified)" when converted at run time.
std::map<std::string, std::string> plannedReads(const DriverPlan& plan) {
  std::map<std::string, std::string> out;
  for (const auto& [name, format] : plan.formats)
    out[name] = plan.densified.at(name) ? "dense (densified)" : format.toString();
  return out;
}

bool containsText(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LowerDriverPlan, SingleSparseFactorDrivesItsLevels) {
  // SpMV and SpMM over csr: A drives (i dense, j / k compressed), the dense operands are located.
  for (const char* kernel : {"y(i) = A(i,j) * x(j)", "C(i,j) = A(i,k) * B(k,j)"}) {
    SCOPED_TRACE(kernel);
    const DriverPlan plan = planForDriverTest(kernel, {{"A", "csr"}});
    EXPECT_EQ(plan.formats.at("A").toString(), "csr");
    EXPECT_FALSE(plan.densified.at("A"));
    EXPECT_TRUE(plan.notes.empty());
  }
  const LoweredKernel spmv = lowerForDriverTest("y(i) = A(i,j) * x(j)", {{"A", "csr"}});
  EXPECT_EQ(spmv.loopOrders, std::vector<std::string>{"i, j"});
  const std::string body = ir::toString(spmv.body);
  // j is A's position loop over row v_i; x is located at A's coordinate.
  EXPECT_TRUE(containsText(
      body, "for q0_0_1 in [int64_t(tA_pos1[p0_0_0]), int64_t(tA_pos1[(p0_0_0 + 1)]))"))
      << body;
  EXPECT_TRUE(containsText(body, "let v_j: int64_t = int64_t(tA_crd1[q0_0_1])")) << body;
  EXPECT_TRUE(containsText(body, "let p0_1_0: int64_t = v_j")) << body;

  // The storage order decides the loop order: csc walks columns first, SpMM is Gustavson's.
  EXPECT_EQ(lowerForDriverTest("y(i) = A(i,j) * x(j)", {{"A", "csc"}}).loopOrders,
            std::vector<std::string>{"j, i"});
  EXPECT_EQ(lowerForDriverTest("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}}).loopOrders,
            std::vector<std::string>{"i, k, j"});
}

TEST(LowerDriverPlan, SddmmOutputSharesItsSparseFactorsPattern) {
  const std::string sddmm = "C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))";
  const DriverPlan plan = planForDriverTest(sddmm, {{"A", "csr"}, {"C", "csr"}});
  EXPECT_EQ(plannedReads(plan),
            (std::map<std::string, std::string>{{"A", "csr"}, {"D", "dense"}, {"E", "dense"}}));
  EXPECT_TRUE(plan.notes.empty());
  const LoweredKernel lowered = lowerForDriverTest(sddmm, {{"A", "csr"}, {"C", "csr"}});
  EXPECT_EQ(lowered.outputPatternFrom, "A");
  EXPECT_EQ(lowered.assembledLevel, -1);
  EXPECT_EQ(lowered.loopOrders, std::vector<std::string>{"i, j, k"});
}

TEST(LowerListOutput, WritesEveryCoordinateAndSkipsZeroFillPadding) {
  // A bsr driver into a list (what lowerStage asks for when no order or copy assembles the rows):
  // both phases on one thread, the symbolic one counting into pos[1]; each write stores both
  // coordinates and the value, only where A's slot holds an entry (a block's padding is none).
  pipeline::CheckedStage stage = checkedForDriverTest("C(i,j) = 2 * A(i,j)", {{"A", "bsr:2x2"}});
  stage.lowerOptions.formats["C"] = listFormat(2);
  stage.lowerOptions.listOutput = true;
  const LoweredKernel lowered = lowerKernel(stage.checked, stage.lowerOptions);
  EXPECT_TRUE(lowered.listOutput);
  EXPECT_EQ(lowered.assembledLevel, 0);
  const std::string symbolic = ir::toString(lowered.symbolic);
  const std::string body = ir::toString(lowered.body);
  EXPECT_FALSE(containsText(body, "parallel")) << body;
  EXPECT_TRUE(containsText(symbolic, "tC_pos0[1] = nnz0")) << symbolic;
  EXPECT_TRUE(containsText(body,
                           "if (tA_vals[p0_0_3] != 0.0f):\n"
                           "                tC_crd0[w0] = v_i\n"
                           "                tC_crd1[w0] = v_j\n"))
      << body;
  // Without the list option the same output format is refused (it is no assembly format).
  stage.lowerOptions.listOutput = false;
  EXPECT_THROW(lowerKernel(stage.checked, stage.lowerOptions), Error);
}

TEST(LowerDriverPlan, SparseOperandsOfOneIndexAreCoIterated) {
  // csr + csr and dcsr * csr: both stay sparse and merge their column coordinates.
  for (const auto& [kernel, formatA] : std::vector<std::pair<std::string, std::string>>{
           {"C(i,j) = A(i,j) + B(i,j)", "csr"}, {"C(i,j) = A(i,j) * B(i,j)", "dcsr"}}) {
    SCOPED_TRACE(kernel + " with A " + formatA);
    const DriverPlan plan = planForDriverTest(kernel, {{"A", formatA}, {"B", "csr"}});
    EXPECT_EQ(plannedReads(plan),
              (std::map<std::string, std::string>{{"A", formatA}, {"B", "csr"}}));
    EXPECT_TRUE(plan.notes.empty());
    const LoweredKernel lowered = lowerForDriverTest(kernel, {{"A", formatA}, {"B", "csr"}});
    EXPECT_TRUE(containsText(ir::toString(lowered.body), "# co-iterate j over A, B"));
  }
  // A sparse operand beside a dense one drives nothing to merge with.
  const LoweredKernel located = lowerForDriverTest("C(i,j) = A(i,j) * D(i,j)", {{"A", "csr"}});
  EXPECT_FALSE(containsText(ir::toString(located.body), "co-iterate"));
}

TEST(LowerDriverPlan, OperandsThatCannotBeMergedAreReadThroughACopy) {
  // csc beside csr: the later driver is read in the first one's level order.
  {
    const DriverPlan plan =
        planForDriverTest("C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csc"}});
    EXPECT_EQ(plannedReads(plan), (std::map<std::string, std::string>{{"A", "csr"}, {"B", "csr"}}));
    EXPECT_EQ(plan.notes, std::vector<std::string>{
                              "input B (csc) is read as csr, a copy in the level order of A"});
  }
  // coo's singleton level does not co-iterate: a compressed copy.
  {
    const DriverPlan plan =
        planForDriverTest("C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "coo"}});
    EXPECT_EQ(plannedReads(plan), (std::map<std::string, std::string>{{"A", "csr"}, {"B", "csr"}}));
    EXPECT_EQ(plan.notes,
              std::vector<std::string>{"input B (coo) is read as csr, a compressed copy: A also "
                                       "iterates index 'j', and coo levels do not co-iterate"});
  }
  // dcsr in a sum with csr: where A has no row, B may still be nonzero, so A's rows must be
  // dense to merge with B's (a product would skip them: see the co-iteration test).
  {
    const DriverPlan plan =
        planForDriverTest("C(i,j) = A(i,j) + B(i,j)", {{"A", "dcsr"}, {"B", "csr"}});
    EXPECT_EQ(plannedReads(plan), (std::map<std::string, std::string>{{"A", "csr"}, {"B", "csr"}}));
    EXPECT_EQ(plan.notes, std::vector<std::string>{
                              "input A (dcsr) is read as csr, a compressed copy dense along 'i', "
                              "where another operand is dense"});
  }
}

TEST(LowerDriverPlan, InputsWhoseZerosCannotBeSkippedAreReadAsDense) {
  // exp(0) = 1 and A + D with D dense: skipping A's missing entries would skip nonzeros.
  for (const char* kernel : {"y(i) = exp(A(i,j)) * x(j)", "C(i,j) = A(i,j) + D(i,j)"}) {
    SCOPED_TRACE(kernel);
    const DriverPlan plan = planForDriverTest(kernel, {{"A", "csr"}});
    EXPECT_TRUE(plan.densified.at("A"));
    EXPECT_EQ(plan.notes, std::vector<std::string>{
                              "input A (csr) is read as dense: a zero of it does not make its "
                              "term zero"});
  }
  // The same A as a factor drives.
  EXPECT_FALSE(planForDriverTest("C(i,j) = A(i,j) * D(i,j)", {{"A", "csr"}}).densified.at("A"));
  const LoweredKernel lowered = lowerForDriverTest("y(i) = exp(A(i,j)) * x(j)", {{"A", "csr"}});
  ASSERT_EQ(lowered.tensors.size(), 3u);
  EXPECT_EQ(lowered.tensors[1].name, "A");
  EXPECT_TRUE(lowered.tensors[1].densify);
  EXPECT_EQ(lowered.tensors[1].format.toString(), "dense");

  // A max over csr counts its implicit zeros and drives; coo is read as dense.
  const std::string rowMax = "y(i) = max(j, A(i,j))";
  const DriverPlan csr = planForDriverTest(rowMax, {{"A", "csr"}});
  EXPECT_FALSE(csr.densified.at("A"));
  EXPECT_TRUE(csr.notes.empty());
  // coo repeats row coordinates: a row's entries would be split over several accumulators.
  const DriverPlan coo = planForDriverTest(rowMax, {{"A", "coo"}});
  EXPECT_TRUE(coo.densified.at("A"));
  ASSERT_EQ(coo.notes.size(), 1u);
  EXPECT_EQ(coo.notes[0],
            "input A (coo) is read as dense: it appears in a max reduction with other sparse "
            "operands, blocked levels, repeated output coordinates (coo), or a value at its zeros "
            "that is not 0");
}

TEST(LowerLoopOrder, PreferencesAmongFreeChoices) {
  // Row-major locality first (smaller position), then output indices, then the first listed.
  const std::vector<LoopVarInfo> spmm = {{"i", 0.0, true}, {"j", 1.0, true}, {"k", 0.5, false}};
  EXPECT_EQ(chooseLoopOrder(spmm, {}, {}), (std::vector<int>{0, 2, 1}));
  // An output index wins a tie in position.
  const std::vector<LoopVarInfo> tie = {{"k", 0.0, false}, {"i", 0.0, true}};
  EXPECT_EQ(chooseLoopOrder(tie, {}, {}), (std::vector<int>{1, 0}));
  // Edges (a driver's storage order) come before every preference: j before i (csc).
  const std::vector<LoopVarInfo> spmv = {{"i", 0.0, true}, {"j", 1.0, false}};
  EXPECT_EQ(chooseLoopOrder(spmv, {{1, 0}}, {{1, 0}}), (std::vector<int>{1, 0}));
  // Continuing the operand being walked beats locality: after i, the chain i -> j goes on to j
  // although k comes earlier in its tensors.
  const std::vector<LoopVarInfo> chained = {{"i", 0.0, true}, {"k", 0.2, false}, {"j", 0.9, true}};
  EXPECT_EQ(chooseLoopOrder(chained, {{0, 2}}, {{0, 2}}), (std::vector<int>{0, 2, 1}));
}

TEST(LowerLoopOrder, ConflictingStorageOrdersAreRefusedNamingTheLoops) {
  const std::vector<LoopVarInfo> vars = {{"i", 0.0, true}, {"j", 1.0, true}, {"k", 0.5, false}};
  try {
    chooseLoopOrder(vars, {{0, 1}, {1, 0}}, {{0, 1}, {1, 0}});
    FAIL() << "a cycle between i and j was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    // k is free and placed first; i and j are left in the cycle.
    EXPECT_EQ(std::string(e.what()),
              "the sparse operands' storage orders conflict over the loops i, j (one operand "
              "needs a transposed copy: bind it in the other order, e.g. csc instead of csr, or "
              "as dense)");
  }
}

TEST(LowerLoopOrder, ReorderMustRespectTheStorageOrder) {
  // reorder(i, j, k) is compatible with csr A(i,k) (i before k); reorder(j, i) on SpMV is not.
  EXPECT_EQ(
      lowerForDriverTest("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}}, "reorder(i, j, k)").loopOrders,
      std::vector<std::string>{"i, j, k"});
  try {
    lowerForDriverTest("y(i) = A(i,j) * x(j)", {{"A", "csr"}}, "reorder(j, i)");
    FAIL() << "reorder(j, i) over csr was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "reorder(j, i) conflicts with the storage order of the sparse operands: A (csr) "
              "walks i j in that order");
  }
}

}  // namespace
}  // namespace sparseflow::lower
