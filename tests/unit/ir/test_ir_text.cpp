// The loop IR and the lowered kernel as text: parse(print(k)) is k after every stage that makes
// IR (lower, schedule, default-transforms) for kernels across formats, dtypes, schedules and
// assembled outputs; the C++ generated from the text is the C++ generated from the original; and
// malformed text is refused with its line and column.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/c/emit_cpp.h"
#include "expr/expr.h"
#include "ir/equal.h"
#include "ir/parser.h"
#include "lower/lowered_text.h"
#include "pipeline/stages.h"
#include "sparseflow/error.h"

namespace sparseflow {
namespace {

struct Case {
  std::string kernel;
  std::map<std::string, std::string> formats;
  std::string schedule;
  std::map<std::string, DType> dtypes;
};

std::vector<Case> cases() {
  const DType f64 = DType::kF64;
  return {
      {"y(i) = A(i,j) * x(j)", {{"A", "csr"}}, "", {}},
      {"y(i) = A(i,j) * x(j)", {{"A", "csr"}}, "split(i, i0, i1, 64); parallel(i0)", {}},
      {"y(i) = A(i,j) * x(j)", {{"A", "coo"}}, "", {{"A", f64}, {"x", f64}, {"y", f64}}},
      {"y(i) = A(i,j) * x(j)", {{"A", "ell"}}, "", {}},
      {"y(o) = W(o,i) * x(i)", {{"W", "2:4"}}, "", {}},
      {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {{"A", "csr"}}, "", {}},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "bsr:4x4"}}, "", {}},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "dcsr"}}, "reorder(i, k, j); vectorize(j)", {}},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "csc"}}, "", {}},
      {"C(i,j) += alpha * A(i,k) * B(k,j)", {{"A", "csr"}}, "unroll(j, 4)", {}},
      {"C(i,j) = A(i,j) * sum(k, D(i,k) * E(j,k))", {{"A", "csr"}, {"C", "csr"}}, "", {}},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}}, "", {}},
      {"C(i,j) = A(i,j) + B(i,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}}, "", {}},
      {"C(i,j) = softmax(j, A(i,k) * B(k,j))", {{"A", "csr"}}, "", {}},
      {"C(i,j) = layernorm(j, A(i,k) * B(k,j))",
       {{"A", "csr"}},
       "",
       {{"A", f64}, {"B", f64}, {"C", f64}}},
      {"y(i) = max(j, A(i,j))", {{"A", "csr"}}, "", {}},
      {"C(i,j) = exp(A(i,j)) * B(i,j)", {{"A", "csr"}}, "", {}},
      {"A(i,r) = X(i,j,k) * B(j,r) * C(k,r)", {{"X", "csf"}}, "", {}},
      {"C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}}, "split(i, i0, i1, 32); parallel(i0)", {}},
  };
}

/// Lowered, scheduled, default-transformed: the kernel after each stage that makes IR.
std::vector<std::pair<std::string, lower::LoweredKernel>> stagesOf(const Case& c) {
  KernelOptions options;
  for (const auto& [name, format] : c.formats) options.formats[name] = format;
  options.dtypes = c.dtypes;
  options.schedule = Schedule::parse(c.schedule);
  const pipeline::CheckedStage checked = pipeline::checkStage(expr::parse(c.kernel), options);
  std::vector<std::pair<std::string, lower::LoweredKernel>> out;
  lower::LoweredKernel k = pipeline::lowerStage(checked);
  out.emplace_back("lower", k);
  k = pipeline::scheduleStage(std::move(k), checked.schedule);
  out.emplace_back("schedule", k);
  k = pipeline::defaultTransformsStage(std::move(k));
  out.emplace_back("default-transforms", k);
  return out;
}

TEST(IrText, EveryStageReadsBackAsTheSameKernel) {
  int checkedCount = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.kernel + " " + c.schedule);
    for (const auto& [stage, kernel] : stagesOf(c)) {
      SCOPED_TRACE(stage);
      const std::string text = lower::printKernel(kernel);
      lower::LoweredKernel back;
      try {
        back = lower::parseKernel(text, "printed");
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\n" << text;
        continue;
      }
      EXPECT_TRUE(lower::sameKernel(kernel, back)) << text << "\n--- read back as ---\n"
                                                   << lower::printKernel(back);
      EXPECT_EQ(lower::printKernel(back), text);
      // The C++ made from the text is the C++ made from the kernel itself.
      EXPECT_EQ(codegen::emitCpp(back), codegen::emitCpp(kernel));
      ++checkedCount;
    }
  }
  EXPECT_EQ(checkedCount, 3 * static_cast<int>(cases().size()));
}

TEST(IrText, EqualityTellsKernelsApart) {
  // Different kernels (and the same kernel under different schedules) are not equal: equality
  // is not vacuous.
  const auto spmv = stagesOf(cases()[0]).back().second;
  const auto split = stagesOf(cases()[1]).back().second;
  const auto coo = stagesOf(cases()[2]).back().second;
  EXPECT_TRUE(ir::equal(spmv.body, spmv.body));
  EXPECT_FALSE(ir::equal(spmv.body, split.body));
  EXPECT_FALSE(lower::sameKernel(spmv, coo));
  // One changed literal, type or annotation is a difference.
  const ir::ParseEnvironment env{{{"a", ir::ScalarType::kF32}}, {{"n", ir::ScalarType::kI64}}};
  const ir::Stmt base = ir::parseStmt("for v_i in [0, n) parallel:\n  a[v_i] = 1.0f\n", env);
  for (const char* other :
       {"for v_i in [0, n) parallel:\n  a[v_i] = 2.0f\n",
        "for v_i in [0, n) parallel disjoint:\n  a[v_i] = 1.0f\n",
        "for v_i in [1, n) parallel:\n  a[v_i] = 1.0f\n", "for v_i in [0, n):\n  a[v_i] = 1.0f\n",
        "for v_i in [0, n) parallel  # i0:\n  a[v_i] = 1.0f\n",
        "for v_i: int32_t in [0, n) parallel:\n  a[v_i] = 1.0f\n",
        "for v_i in [0, n) parallel:\n  a[v_i] += 1.0f\n"}) {
    EXPECT_FALSE(ir::equal(base, ir::parseStmt(other, env))) << other;
  }
}

TEST(IrText, LiteralsAndScopesKeepTheirTypes) {
  const ir::ParseEnvironment env{{{"a", ir::ScalarType::kF64}, {"m", ir::ScalarType::kU8}},
                                 {{"n", ir::ScalarType::kI64}}};
  const std::string text =
      "scope:\n"
      "  let x: double = 1.0\n"
      "  let f: float = -0.25f\n"
      "  let c: int32_t = int32_t(7)\n"
      "  let b: bool = (true && (c < int32_t(9)))\n"
      "  a[0] = select(b, x, double(f))\n"
      "scope:\n"
      "  let x: double = inf\n"
      "  a[1] max= (-inf + nan)\n"
      "  m[2] = uint8_t(1)\n"
      "  if (n != 0):\n"
      "    sort a[0, n)\n"
      "  else:\n"
      "    # nothing to sort\n"
      "allocate w: float[(n * 4)] zeroed per thread:\n"
      "  for v_k in [0, n) vectorized reduce(acc) into(w) critical atomic  # (no label):\n"
      "    w[v_k] += exp(float(a[v_k]))\n";
  const ir::Stmt s = ir::parseStmt(text, env, "literals");
  // Printing gives the same text back, except the annotation order the printer uses.
  std::string expected = text;
  expected.replace(expected.find("reduce(acc) into(w) critical atomic"),
                   std::string("reduce(acc) into(w) critical atomic").size(),
                   "reduce(acc) atomic into(w) critical");
  EXPECT_EQ(ir::toString(s), expected);
  EXPECT_TRUE(ir::equal(ir::parseStmt(ir::toString(s), env), s));
}

TEST(IrText, MalformedTextNamesItsLineAndColumn) {
  const ir::ParseEnvironment env{{{"a", ir::ScalarType::kF32}}, {{"n", ir::ScalarType::kI64}}};
  std::vector<std::pair<std::string, std::string>> bad = {
      {"for v_i in [0, n):\n  a[v_j] = 1.0f\n", "in.ir:2:5: 'v_j' is not declared"},
      {"for v_i in [0, n):\n   a[v_i] = 1.0f\n", "in.ir:2:1: indented by 3 spaces"},
      {"for v_i in [0, n)\n", "in.ir:1:18: expected ':'"},
      {"b[0] = 1.0f\n", "in.ir:1:1: 'b' is not a declared array"},
      {"a[0] = (1.0f ^ 2.0f)\n", "in.ir:1:14: expected a binary operator, found '^'"},
      {"let x: float = 1.0\n", "in.ir:1:1: 'x' is declared float but its value is double"},
      {"a[0] = frob(1.0f)\n", "in.ir:1:8: unknown function 'frob'"},
      {"a[0] = 99999999999999999999\n", "is not an int64_t"},
      {"  a[0] = 1.0f\n", "in.ir:1:1: indented by 2 spaces where a statement at 0"},
      {"else:\n", "'else' without an 'if'"},
      {"for v_i in [0, n) sideways:\n", "unknown loop annotation 'sideways'"},
  };
  bad.emplace_back("a[0] = " + std::string(600, '(') + "1.0f" + std::string(600, ')') + "\n",
                   "in.ir:1:508: expressions nested deeper than 500");
  std::string deep;
  for (int d = 0; d < 600; ++d) deep += std::string(static_cast<size_t>(2 * d), ' ') + "if true:\n";
  bad.emplace_back(deep, "in.ir:501:1: statements nested deeper than 500 levels");
  for (const auto& [text, message] : bad) {
    try {
      ir::parseStmt(text, env, "in.ir");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what() << "\nwanted: " << message;
    }
  }
  // The kernel header too.
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"tensor y: float rank 1 format dense\nindex (i)\noutput indices (i)\n", "no 'body:'"},
           {"tensor y: quad rank 1 format dense\nbody:\n", "k.ir:1: 'quad' is not a type"},
           {"frobnicate\nbody:\n", "k.ir:1: unknown header line 'frobnicate'"},
           {"tensor y: float rank 1 format dense\narray tA_vals: float = A values\nbody:\n",
            "k.ir:2: array tA_vals of 'A', which no tensor line before it names"},
           {"tensor y: float rank 1 format dense\nindex (i)\nbody:\nty_vals[0] = 1.0f\n",
            "k.ir:4:1: 'ty_vals' is not a declared array"},
           // Found by fuzz_ir_text: a repeated tensor line bound the arrays after it to the second
           // tensor, which printing (tensors first) then bound differently.
           {"tensor y: float rank 1 format dense\ntensor y: float rank 1 format dense\nbody:\n",
            "k.ir:2: a second tensor line for 'y'"},
           {"tensor y: float rank 1 format dense\narray ty_vals: float = y values\n"
            "array ty_vals: float = y values\nbody:\n",
            "k.ir:3: a second array line for 'ty_vals'"}}) {
    try {
      lower::parseKernel(text, "k.ir");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what() << "\nwanted: " << message;
    }
  }
}

}  // namespace
}  // namespace sparseflow
