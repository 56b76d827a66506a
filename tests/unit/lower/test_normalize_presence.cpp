// lower/normalize.h and lower/presence.h on checked kernels: the passes and temporaries a
// statement splits into, and where a body may be nonzero (a structural zero annihilates a product,
// not a sum).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "expr/expr.h"
#include "ir/ir.h"
#include "lower/normalize.h"
#include "lower/presence.h"
#include "pipeline/stages.h"

namespace sparseflow::lower {
namespace {

expr::CheckedKernel checkedForNormalizeTest(const std::string& kernel) {
  return pipeline::checkStage(expr::parse(kernel), KernelOptions{}).checked;
}

/// One pass as `target(i, j) += body over [k]` (max= for a max), to compare whole passes at once.
std::string describePass(const Pass& pass) {
  std::string out = pass.target + "(";
  for (size_t d = 0; d < pass.targetIndices.size(); ++d)
    out += (d ? ", " : "") + pass.targetIndices[d];
  out += pass.op == expr::ReduceOp::kMax ? ") max= " : ") += ";
  out += expr::toString(*pass.body) + " over [";
  for (size_t r = 0; r < pass.reductions.size(); ++r) out += (r ? ", " : "") + pass.reductions[r];
  return out + "]";
}

std::vector<std::string> describePasses(const Normalized& normalized) {
  std::vector<std::string> out;
  for (const Pass& pass : normalized.passes) out.push_back(describePass(pass));
  return out;
}

/// The presence of an access as a boolean variable `has_A`, or false for the tensors in `absent`.
ir::Expr presenceUnlessAbsent(const expr::Access& access, const std::vector<std::string>& absent) {
  for (const std::string& name : absent) {
    if (name == access.tensor) return boolConstant(false);
  }
  return ir::var("has_" + access.tensor, ir::ScalarType::kBool);
}

/// nonzeroCondition of a statement's right-hand side (every index on the left: no reduction),
/// printed, with the tensors in `absent` having no entry.
std::string nonzeroWhereText(const std::string& kernel, const std::vector<std::string>& absent) {
  const expr::Statement statement = expr::parse(kernel);
  return ir::toString(nonzeroCondition(
      *statement.rhs, [&](const expr::Access& a) { return presenceUnlessAbsent(a, absent); }));
}

TEST(LowerNormalize, SumsInFactorPositionAreHoistedIntoOneNest) {
  // SDDMM: the sum multiplies M, so it is one nest over i, j, k with no temporary.
  const Normalized sddmm =
      normalize(checkedForNormalizeTest("C(i,j) = M(i,j) * sum(k, X(i,k) * Z(j,k))"));
  EXPECT_TRUE(sddmm.temporaries.empty());
  EXPECT_EQ(describePasses(sddmm),
            std::vector<std::string>{"C(i, j) += M(i,j) * (X(i,k) * Z(j,k)) over [k]"});

  // A top-level sum of two reductions: one nest per term, both adding into y.
  const Normalized twoTerms =
      normalize(checkedForNormalizeTest("y(i) = A(i,j) * x(j) - B(i,k) * z(k)"));
  EXPECT_TRUE(twoTerms.temporaries.empty());
  EXPECT_EQ(describePasses(twoTerms),
            (std::vector<std::string>{"y(i) += A(i,j) * x(j) over [j]",
                                      "y(i) += -(B(i,k) * z(k)) over [k]"}));
}

TEST(LowerNormalize, ReductionUnderAFunctionIsPrecomputedIntoADenseTemporary) {
  const Normalized n = normalize(checkedForNormalizeTest("C(i,j) = relu(A(i,k) * B(k,j) + b(j))"));
  ASSERT_EQ(n.temporaries.size(), 1u);
  EXPECT_EQ(n.temporaries[0].name, "sftmp0");
  EXPECT_EQ(n.temporaries[0].indices, (std::vector<std::string>{"i", "j"}));
  // The temporary's nest runs first; the output's nest reads it and reduces nothing.
  EXPECT_EQ(describePasses(n),
            (std::vector<std::string>{"sftmp0(i, j) += A(i,k) * B(k,j) over [k]",
                                      "C(i, j) += relu(sftmp0(i,j) + b(j)) over []"}));

  // Temporary names skip the kernel's own tensors (sftmp0 and sftmp1 here).
  const Normalized clash =
      normalize(checkedForNormalizeTest("C(i,j) = relu(sftmp0(i,k) * B(k,j)) + sftmp1(i,j)"));
  ASSERT_EQ(clash.temporaries.size(), 1u);
  EXPECT_EQ(clash.temporaries[0].name, "sftmp2");
}

TEST(LowerNormalize, RepeatedReductionIsComputedOnceAndReadTwice) {
  // The same product under two functions, with another name for the reduced index: one
  // temporary, read by both terms.
  const Normalized n = normalize(checkedForNormalizeTest(
      "C(i,j) = relu(sum(k, A(i,k) * B(k,j))) + exp(sum(m, A(i,m) * B(m,j)))"));
  ASSERT_EQ(n.temporaries.size(), 1u);
  EXPECT_EQ(describePasses(n), (std::vector<std::string>{"sftmp0(i, j) += A(i,k) * B(k,j) over [k]",
                                                         "C(i, j) += relu(sftmp0(i,j)) over []",
                                                         "C(i, j) += exp(sftmp0(i,j)) over []"}));
}

TEST(LowerNormalize, InputsReadAsDenseAreThoseWhoseZerosDoNotAnnihilate) {
  const auto allSparse = [](const std::string&) { return true; };
  {
    const expr::CheckedKernel k = checkedForNormalizeTest("y(i) = exp(A(i,j)) * x(j)");
    // x is a factor (its zeros annihilate the product); A is under exp, whose f(0) is 1.
    EXPECT_EQ(inputsReadAsDense(k, normalize(k), allSparse),
              (std::vector<std::pair<std::string, std::string>>{
                  {"A", "a zero of it does not make its term zero"}}));
  }
  {
    const expr::CheckedKernel k = checkedForNormalizeTest("y(i) = max(j, A(i,j))");
    EXPECT_EQ(
        inputsReadAsDense(k, normalize(k), allSparse),
        (std::vector<std::pair<std::string, std::string>>{{"A", "it appears in a max reduction"}}));
  }
  {
    const expr::CheckedKernel k = checkedForNormalizeTest("C(i,j) = A(i,j) * B(i,j)");
    EXPECT_TRUE(inputsReadAsDense(k, normalize(k), allSparse).empty());
  }
}

TEST(LowerPresence, AStructuralZeroAnnihilatesAProductButNotASum) {
  // Every presence unknown (a variable): the merge lattice as one predicate.
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) * B(i,j)", {}), "(has_A && has_B)");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) + B(i,j)", {}), "(has_A || has_B)");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) * B(i,j) + E(i,j)", {}),
            "((has_A && has_B) || has_E)");
  // A absent: the product is zero, the sum still depends on B.
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) * B(i,j)", {"A"}), "false");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) + B(i,j)", {"A"}), "has_B");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) - B(i,j)", {"A", "B"}), "false");
}

TEST(LowerPresence, FunctionsQuotientsAndLiterals) {
  // f(0) = 0 functions keep their operand's zero; exp does not.
  EXPECT_EQ(nonzeroWhereText("C(i,j) = relu(A(i,j))", {"A"}), "false");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = -A(i,j)", {"A"}), "false");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = exp(A(i,j))", {"A"}), "true");
  // A quotient needs its numerator only.
  EXPECT_EQ(nonzeroWhereText("C(i,j) = A(i,j) / D(i,j)", {"A"}), "false");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = D(i,j) / A(i,j)", {"A"}), "has_D");
  // A literal 0 is never nonzero; a parameter always may be.
  EXPECT_EQ(nonzeroWhereText("C(i,j) = 0 * A(i,j)", {}), "false");
  EXPECT_EQ(nonzeroWhereText("C(i,j) = alpha * A(i,j)", {}), "has_A");
}

}  // namespace
}  // namespace sparseflow::lower
