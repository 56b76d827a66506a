// TeSA building blocks: index sets, meet and join, validation, reshape mapping, and the builder's
// attribute normalization.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "graph/graph.h"
#include "graph/printer.h"
#include "graph/reshape_map.h"
#include "sparseflow/error.h"

namespace sparseflow::graph {
namespace {

TEST(IndexSet, MergesRangesAndPrintsThem) {
  IndexSet s{5, 1, 2, 3, 9};
  s.addRange(10, 12);
  EXPECT_EQ(printIndexSet(s), "[1..3, 5, 9..11]");
  EXPECT_EQ(s.count(), 7);
  EXPECT_TRUE(s.contains(10));
  EXPECT_FALSE(s.contains(4));
  EXPECT_FALSE(s.covers(4));
  EXPECT_TRUE(IndexSet::range(0, 4).covers(4));
  EXPECT_EQ(printIndexSet(s.shifted(-2, 0, 4)), "[0, 1, 3]");
  EXPECT_EQ(printIndexSet(IndexSet::range(0, int64_t{1} << 40)), "[0..1099511627775]");
}

TEST(IndexSet, UnionAndIntersectionMatchStdSet) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    IndexSet a;
    IndexSet b;
    std::set<int64_t> sa;
    std::set<int64_t> sb;
    for (int k = 0; k < 20; ++k) {
      const int64_t i = static_cast<int64_t>(rng() % 40);
      const int64_t len = static_cast<int64_t>(rng() % 4);
      IndexSet& t = (k % 2 == 0) ? a : b;
      std::set<int64_t>& st = (k % 2 == 0) ? sa : sb;
      t.addRange(i, i + len);
      for (int64_t j = i; j < i + len; ++j) st.insert(j);
    }
    const IndexSet u = unite(a, b);
    const IndexSet n = intersect(a, b);
    for (int64_t i = 0; i < 45; ++i) {
      ASSERT_EQ(u.contains(i), sa.count(i) + sb.count(i) > 0) << i;
      ASSERT_EQ(n.contains(i), sa.count(i) > 0 && sb.count(i) > 0) << i;
      ASSERT_EQ(a.contains(i), sa.count(i) > 0) << i;
    }
    ASSERT_EQ(a.count(), static_cast<int64_t>(sa.size()));
  }
}

Tesa sample(int64_t zeroCol, double bound, const char* mask) {
  Tesa t;
  setSlices(t.zero, 1, IndexSet{zeroCol, 3});
  t.lowerBound = bound;
  std::vector<bool> m;
  for (const char* c = mask; *c != 0; ++c) m.push_back(*c == '1');
  t.mask = m;
  t.nm = NmStructure{2, 4, 1};
  return t;
}

TEST(Tesa, MeetKeepsEveryFactJoinOnlyCommonOnes) {
  const Tesa a = sample(0, -1.0, "1100");
  Tesa b = sample(1, 0.5, "1010");
  b.nm = NmStructure{1, 4, 1};
  EXPECT_EQ(printTesa(meet(a, b)), "{zero@1=[0, 1, 3], nm=1:4@1, ge=0.5, mask=\"1000\"}");
  EXPECT_EQ(printTesa(join(a, b)), "{zero@1=[3], nm=2:4@1, ge=-1, mask=\"1110\"}");
  EXPECT_EQ(meet(a, Tesa{}), a);
  EXPECT_EQ(join(a, a), a);
}

TEST(Tesa, ValidationNamesTheValue) {
  const TensorType type{DType::kF32, {4, 6}};
  Tesa t;
  t.nm = NmStructure{5, 4, 1};
  try {
    validateTesa(t, type, "w");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "w: n:m structure 5:4 needs 0 <= n <= m <= 1024");
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  t = Tesa{};
  t.block = BlockStructure{{2, 4}, {{2, 0}}};
  EXPECT_THROW(validateTesa(t, type, "w"), Error);
  t.block = BlockStructure{{2, 4}, {{1, 1}}};
  EXPECT_NO_THROW(validateTesa(t, type, "w"));
  Tesa rows;
  setSlices(rows.zero, 0, IndexSet::range(0, 4));
  EXPECT_TRUE(isAllZero(rows, type));
  EXPECT_FALSE(isAllZero(t, type));
}

TEST(ReshapeMap, SplitAndMergeAreConservative) {
  SliceSets rows;
  setSlices(rows, 0, IndexSet{2, 3});
  // [4, 6] -> [2, 2, 6]: rows 2 and 3 are the whole second half of the split.
  EXPECT_EQ(printIndexSet(slicesAt(reshapeSlices(rows, {4, 6}, {2, 2, 6}), 0)), "[1]");
  EXPECT_TRUE(slicesAt(reshapeSlices(rows, {4, 6}, {2, 2, 6}), 1).empty());
  // And back: merging marks every row with a component in the set.
  SliceSets halves;
  setSlices(halves, 0, IndexSet{1});
  EXPECT_EQ(printIndexSet(slicesAt(reshapeSlices(halves, {2, 2, 6}, {4, 6}), 0)), "[2, 3]");
  // Size-1 dimensions and zero-element shapes.
  SliceSets cols;
  setSlices(cols, 1, IndexSet{5});
  EXPECT_EQ(printIndexSet(slicesAt(reshapeSlices(cols, {4, 6}, {4, 1, 6}), 2)), "[5]");
  EXPECT_TRUE(reshapeSlices(cols, {0, 6}, {6, 0}).empty());
}

TEST(GraphBuilder, NormalizesAttributesAndChecksOperands) {
  Graph g;
  const ValueId x = g.addInput("x", {DType::kF32, {2, 3, 4}});
  const ValueId s = g.addOp(OpKind::kSoftmax, {x}, {{"axis", int64_t{-1}}});
  EXPECT_EQ(std::get<int64_t>(g.node(s).attrs.at("axis")), 2);
  const ValueId r = g.addOp(OpKind::kReshape, {x}, {{"shape", std::vector<int64_t>{-1, 4}}});
  EXPECT_EQ(g.node(r).type.shape, (std::vector<int64_t>{6, 4}));
  EXPECT_THROW(g.addOp(OpKind::kRelu, {7}), Error);
  EXPECT_THROW(g.addInput("x", {DType::kF32, {1}}), Error);
  EXPECT_THROW(g.addOp(OpKind::kRelu, {x}, {{"axis", int64_t{0}}}), Error);
  EXPECT_THROW(g.addOp(OpKind::kEmbedding, {x, x}), Error);
  g.addOutput(s);
  EXPECT_TRUE(g.isOutput(s));
  EXPECT_EQ(g.describe(x), "%0 (input 'x')");
}

}  // namespace
}  // namespace sparseflow::graph
