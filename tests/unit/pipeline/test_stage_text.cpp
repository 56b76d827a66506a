// The checked and canonical stages' text read back (pipeline/stage_text.h): print(parse(print(x)))
// is print(x) and the kernel is the same one (statement, formats, dtypes, index copies, schedule,
// and the IR it lowers to), across formats, dtypes, row functions, schedules and decompositions;
// malformed text is refused naming the line. No JIT.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "lower/lowered_text.h"
#include "pipeline/stage_text.h"
#include "pipeline/stages.h"
#include "sparseflow/error.h"

namespace sparseflow::pipeline {
namespace {

struct StageTextCase {
  std::string kernel;
  std::map<std::string, std::string> formats;
  std::map<std::string, DType> dtypes;
  std::string schedule;
};

const std::vector<StageTextCase> kStageTextCases = {
    {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {{"A", "csr"}}, {}, ""},
    {"C(i,j) = softmax(j, A(i,k) * B(k,j) + b(j))", {{"A", "bsr:2x2"}}, {}, ""},
    {"C(i,j) = layernorm(j, A(i,k) * B(k,j))", {{"A", "csr"}}, {}, ""},
    {"y(i) += alpha * A(i,j) * x(j)",
     {{"A", "levels[d0:dense, d1:compressed(nu)]"}},
     {{"A", DType::kF64}, {"x", DType::kF64}},
     ""},
    {"C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "dcsr"}}, {}, ""},
    {"y(i) = A(i,j) * x(j)", {}, {}, "decompose(A, 4)"},
    {"s() = A(i,j)", {{"A", "coo"}}, {}, ""},
    {"A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {{"B", "csf"}}, {}, ""},
    {"Y(n,o) = gelu(X(n,k) * W(o,k))", {{"W", "2:4"}}, {}, ""},
    {"y(i) = A(i,j) * x(j)", {{"A", "csr"}}, {}, "split(i, i0, i1, 64); parallel(i0)"},
    {"y(i) = max(j, A(i,j))", {{"A", "csr"}}, {}, ""},
    {"C(i,j) = A(i,j) * (B(i,k) * D(k,j))", {{"A", "csr"}}, {}, "precompute(C, i)"},
};

CheckedStage checkCase(const StageTextCase& c) {
  KernelOptions options;
  options.formats = c.formats;
  options.dtypes = c.dtypes;
  options.schedule = Schedule::parse(c.schedule);
  return checkStage(expr::parse(c.kernel), options);
}

TEST(StageText, CheckedKernelsReadBackAsTheSameKernel) {
  for (const StageTextCase& c : kStageTextCases) {
    SCOPED_TRACE(c.kernel + " " + c.schedule);
    const CheckedStage checked = checkCase(c);
    const std::string text = printChecked(checked);
    ASSERT_TRUE(isCheckedText(text)) << text;
    const CheckedStage back = parseChecked(text, "case.txt", KernelOptions{});
    EXPECT_EQ(printChecked(back), text);
    // The same tree with the same index names (a reduction's `implicit` mark, which nothing past
    // check reads, is not part of the text).
    std::map<std::string, std::string> renaming;
    EXPECT_TRUE(expr::sameUpToIndexRenaming(*back.checked.statement.rhs,
                                            *checked.checked.statement.rhs, &renaming));
    for (const auto& [from, to] : renaming) EXPECT_EQ(from, to);
    EXPECT_EQ(back.checked.statement.lhs.indices, checked.checked.statement.lhs.indices);
    EXPECT_EQ(back.checked.statement.accumulate, checked.checked.statement.accumulate);
    EXPECT_EQ(back.checked.indexCopyOf, checked.checked.indexCopyOf);
    EXPECT_EQ(back.checked.indexExtents, checked.checked.indexExtents);
    EXPECT_EQ(back.checked.inputs, checked.checked.inputs);
    EXPECT_EQ(back.checked.reductionIndices, checked.checked.reductionIndices);
    EXPECT_EQ(back.checked.computeType, checked.checked.computeType);
    for (const auto& [name, info] : checked.checked.tensors) {
      EXPECT_EQ(back.checked.tensors.at(name).dtype, info.dtype) << name;
      EXPECT_EQ(back.checked.tensors.at(name).shape, info.shape) << name;
    }
    EXPECT_EQ(back.lowerOptions.formats, checked.lowerOptions.formats);
    EXPECT_EQ(back.schedule.toString(), checked.schedule.toString());
    EXPECT_EQ(back.decomposition.has_value(), checked.decomposition.has_value());
    if (!checked.decomposition) {
      EXPECT_EQ(lower::printKernel(lowerStage(back)), lower::printKernel(lowerStage(checked)));
    }
  }
}

TEST(StageText, RowFunctionsNeedTheirIndexCopies) {
  // layernorm's count `sum(j_2, 1)` uses no tensor: its extent is the copied index's, which only
  // the `index` lines say; without them the text is refused, not lowered with a wrong extent.
  const CheckedStage checked = checkCase(kStageTextCases[2]);
  std::string text = printChecked(checked);
  ASSERT_NE(text.find("index j_2: copy of j\n"), std::string::npos) << text;
  std::string without;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at) + 1;
    if (text.compare(at, 6, "index ") != 0) without += text.substr(at, end - at);
    at = end;
  }
  try {
    parseChecked(without, "case.txt", KernelOptions{});
    FAIL() << "accepted without its index copies:\n" << without;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not use 'j_2'"), std::string::npos) << e.what();
  }
}

TEST(StageText, CanonicalContractionsReadBack) {
  int contractions = 0;
  for (const StageTextCase& c : kStageTextCases) {
    SCOPED_TRACE(c.kernel);
    const CheckedStage checked = checkCase(c);
    const CanonicalStage canonical = canonicalizeStage(checked);
    if (!canonical.contraction || checked.decomposition) continue;
    ++contractions;
    const std::string text = printCanonical(canonical);
    EXPECT_EQ(printCanonical(parseCanonical(text, "case.txt", KernelOptions{})), text);
    // The kernel it states chooses the provider the checked kernel chooses (without a schedule).
    if (checked.schedule.empty()) {
      const CheckedStage stated = checkedFromCanonical(text, "case.txt", KernelOptions{});
      KernelOptions options;
      EXPECT_EQ(printSelection(selectProviderStage(stated, canonicalizeStage(stated), options)),
                printSelection(selectProviderStage(checked, canonical, options)));
    }
  }
  EXPECT_GE(contractions, 5);
}

/// Each text is refused by `read` with an error containing its message.
template <typename Read>
void expectRefused(const std::vector<std::pair<std::string, std::string>>& cases, Read read) {
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    try {
      read(text);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(StageText, MalformedTextNamesTheLine) {
  const std::string head = "y(i) = sum(j, A(i,j) * x(j))\ntensor A: csr f32\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {head + "tensor x: dense f32\n", "no 'output y: FORMAT DTYPE' line"},
      {head + "output y: dense f33\n", "case.txt:3: unknown dtype 'f33'"},
      {"y(i) = sum(j, A(i,j) * x(j))\ntensor A: csq f32\n", "case.txt:2: unknown format 'csq'"},
      {head + "tensor Q: dense f32\n", "case.txt:3: 'Q' is not a tensor"},
      {head + "tensor y: dense f32\n", "case.txt:3: 'y' is the kernel's output"},
      {head + "output x: dense f32\n", "case.txt:3: 'x' is not the kernel's output"},
      {head + "tensor A: csr f32\n", "case.txt:3: 'A' is declared twice"},
      {head + "tensor x: dense\n", "case.txt:3: expected 'FORMAT DTYPE'"},
      {head + "tensor x dense f32\n", "case.txt:3: expected 'NAME: ...'"},
      {head + "index j_1: copy of j\n", "case.txt:3: 'j_1' is not an index"},
      {head + "index j: sum of j\n", "case.txt:3: expected 'index NAME: copy of INDEX'"},
      {head + "schedule: splitt(i)\n", "case.txt:3: schedule, column 1"},
      {head + "schedule: parallel(i)\nschedule: parallel(i)\n", "case.txt:4: a second schedule"},
      {head + "y(i) = x(i)\n", "case.txt:3: expected a 'tensor', 'output', 'index' or 'schedule'"},
      {"y(i) = sum(j, A(i,j) * x(j)\ntensor A: csr f32\n", "case.txt:1: line 1, column 28"},
      {"tensor A: csr f32\n", "expected the kernel's statement first"},
  };
  expectRefused(bad,
                [](const std::string& text) { parseChecked(text, "case.txt", KernelOptions{}); });
  const std::vector<std::pair<std::string, std::string>> badCanonical = {
      {"contraction: y(i) = sum(j, A(i,j) * x(j))  [A csr f32, x dense f32]",
       "case.txt:1: the operand list does not give 'y'"},
      {"contraction: y(i) = sum(j, A(i,j) * x(j)) [A csr f32]",
       "case.txt:1: expected the operands"},
      {"contraction: y(i) = sum(j, A(i,j) * x(j))  [A csr, x dense f32, y dense f32]",
       "case.txt:1: expected 'FORMAT DTYPE' after 'A:'"},
      {"contraction: y(i) = exp(A(i,j))  [A csr f32, y dense f32]", "not a contraction"},
      {"y(i) = A(i,j) * x(j)", "expected one line 'contraction: "},
  };
  expectRefused(badCanonical,
                [](const std::string& text) { parseCanonical(text, "case.txt", KernelOptions{}); });
}

}  // namespace
}  // namespace sparseflow::pipeline
