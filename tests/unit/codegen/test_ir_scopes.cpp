// The loop IR's scoping rules (ir/verify.h): blocks that declare names stay scopes, the verifier
// finds redeclarations, shadowing and undeclared names, and the C++ emitter writes a scope as
// braces and refuses IR that breaks the rules.
#include <gtest/gtest.h>

#include "codegen/c/emit_cpp.h"
#include "ir/ir.h"
#include "ir/verify.h"
#include "lower/lower.h"
#include "sparseflow/error.h"

namespace sparseflow::ir {
namespace {

const ScalarType i64 = ScalarType::kI64;

/// `let begin = 0; for v in [begin, n): out[v] = v` — what a split makes of each nest's loop.
Stmt nest(const std::string& begin) {
  return block({let(begin, intImm(0)),
                forLoop("v", i64, var(begin, i64), var("n", i64),
                        store({"out", ScalarType::kF64}, var("v", i64), UpdateOp::kSet,
                              cast(var("v", i64), ScalarType::kF64)))});
}

TEST(IrScopes, BlocksThatDeclareNamesStayScopes) {
  const Stmt two = block({nest("begin"), nest("begin")});
  const auto& outer = static_cast<const Block&>(*two);
  ASSERT_EQ(outer.body.size(), 2u);  // not flattened into one list of four statements
  EXPECT_EQ(outer.body[0]->kind, StmtKind::kBlock);
  EXPECT_EQ(verifyScopes(two, {"n", "out"}), "");
  // Blocks without declarations are spliced as before.
  const Stmt plain = block({block({comment("a"), comment("b")}), comment("c")});
  EXPECT_EQ(static_cast<const Block&>(*plain).body.size(), 3u);
}

TEST(IrScopes, VerifierFindsRedeclarationShadowingAndUndeclaredNames) {
  const std::set<std::string> external{"n", "out"};
  const Stmt twice =
      std::make_shared<Block>(std::vector<Stmt>{let("a", intImm(0)), let("a", intImm(1))});
  EXPECT_EQ(verifyScopes(twice, external), "variable 'a' is declared twice in one scope");
  const Stmt shadow =
      block({let("a", intImm(0)), forLoop("a", i64, intImm(0), var("n", i64), comment("body"))});
  EXPECT_EQ(verifyScopes(shadow, external),
            "loop variable 'a' is declared where an outer 'a' is visible (it would hide it)");
  const Stmt afterScope = block({nest("begin"), let("x", var("begin", i64))});
  EXPECT_EQ(verifyScopes(afterScope, external),
            "variable 'begin' is used where it is not declared");
  EXPECT_EQ(verifyScopes(block({store({"ws", ScalarType::kF64}, intImm(0), UpdateOp::kSet,
                                      floatImm(1, ScalarType::kF64))}),
                         external),
            "array 'ws' is used where it is not declared");
  EXPECT_EQ(verifyScopes(block({let("n", intImm(0))}), external),
            "variable 'n' is declared with the name of a kernel argument");
  EXPECT_EQ(verifyScopes(block({assign("acc", UpdateOp::kAdd, intImm(1))}), external),
            "variable 'acc' is used where it is not declared");
}

lower::LoweredKernel kernelWith(Stmt body) {
  lower::LoweredKernel k;
  k.body = std::move(body);
  k.indexVars = {"i"};
  k.tensors.push_back({"y", Format::parse("dense", 1), 1, ScalarType::kF64});
  k.arrays.push_back({{"ty_vals", ScalarType::kF64}, 0, lower::ArrayBinding::Kind::kValues, 0});
  return k;
}

Stmt fill(const std::string& begin) {
  return block(
      {let(begin, intImm(0)), forLoop("v_i", i64, var(begin, i64), var("n_i", i64),
                                      store({"ty_vals", ScalarType::kF64}, var("v_i", i64),
                                            UpdateOp::kAdd, floatImm(1, ScalarType::kF64)))});
}

TEST(IrScopes, EmitterWritesScopesAsBracesAndRefusesBrokenIr) {
  const std::string source = codegen::emitCpp(kernelWith(block({fill("b"), fill("b")})));
  // Each nest's declaration in braces of its own.
  const size_t first = source.find("{\n    int64_t b = 0;");
  ASSERT_NE(first, std::string::npos) << source;
  EXPECT_NE(source.find("{\n    int64_t b = 0;", first + 1), std::string::npos) << source;
  // The same two lets in one scope: an internal error naming the problem, never C++ that fails.
  const Stmt flat =
      std::make_shared<Block>(std::vector<Stmt>{let("b", intImm(0)), let("b", intImm(0))});
  try {
    codegen::emitCpp(kernelWith(flat));
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("breaks the scoping rules (variable 'b' is declared "
                                         "twice in one scope)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sparseflow::ir
