// Loops over a sparse level's coordinates stay scalar in the emitted C++ (codegen/c/
// coordinate_loops.h): a loop whose variable indexes an integer array, directly or through lets,
// is one; dense loops and loops that only read values are not.
#include <gtest/gtest.h>

#include "codegen/c/coordinate_loops.h"
#include "ir/ir.h"

namespace sparseflow::ir {
namespace {

const ScalarType i64 = ScalarType::kI64;
const ScalarType f32 = ScalarType::kF32;
const Array crd{"tA_crd1", ScalarType::kI32};
const Array vals{"tA_vals", f32};
const Array x{"tx_vals", f32};
const Array y{"ty_vals", f32};

const For& asFor(const Stmt& s) {
  return static_cast<const For&>(*s);
}

TEST(CoordinateLoops, ALoopWhoseVariableIndexesAnIntegerArrayWalksCoordinates) {
  // for q: let v_j = crd[q]; y[0] += vals[q] * x[v_j]   (an SpMV row)
  const Stmt row = forLoop(
      "q", i64, intImm(0), var("n", i64),
      block({let("v_j", cast(load(crd, var("q", i64)), i64)),
             store(y, intImm(0), UpdateOp::kAdd,
                   binary(BinaryOp::kMul, load(vals, var("q", i64)), load(x, var("v_j", i64))))}));
  EXPECT_TRUE(codegen::walksCoordinates(asFor(row)));
  // Through a let: let p = q + 1; crd[p].
  const Stmt shifted = forLoop("q", i64, intImm(0), var("n", i64),
                               block({let("p", add(var("q", i64), intImm(1))),
                                      let("c", cast(load(crd, var("p", i64)), i64))}));
  EXPECT_TRUE(codegen::walksCoordinates(asFor(shifted)));
  // A CSR row loop: the inner loop's bounds are pos[i] and pos[i + 1].
  const Array pos{"tA_pos1", ScalarType::kI32};
  const Stmt rows =
      forLoop("i", i64, intImm(0), var("m", i64),
              forLoop("q", i64, cast(load(pos, var("i", i64)), i64),
                      cast(load(pos, add(var("i", i64), intImm(1))), i64), comment("entries")));
  EXPECT_TRUE(codegen::walksCoordinates(asFor(rows)));
}

TEST(CoordinateLoops, DenseLoopsAndValueReadsDoNot) {
  // for j: y[j] += x[j] * vals[k]   (a dense row; k fixed outside)
  const Stmt dense =
      forLoop("j", i64, intImm(0), var("n", i64),
              store(y, var("j", i64), UpdateOp::kAdd,
                    binary(BinaryOp::kMul, load(x, var("j", i64)), load(vals, var("k", i64)))));
  EXPECT_FALSE(codegen::walksCoordinates(asFor(dense)));
  // An integer array read at a position that does not move with the loop.
  const Stmt fixed =
      forLoop("j", i64, intImm(0), var("n", i64),
              block({let("c", cast(load(crd, var("k", i64)), i64)),
                     store(y, var("j", i64), UpdateOp::kSet, load(x, var("c", i64)))}));
  EXPECT_FALSE(codegen::walksCoordinates(asFor(fixed)));
}

}  // namespace
}  // namespace sparseflow::ir
