// Strided views (graph/exec/strided_view.h): reshapes that keep or lose a layout, transposes and
// their inverse, broadcasts, and common refinements of batch shapes, with the strides written out;
// and every view checked element by element against the index arithmetic of the operators.
#include <gtest/gtest.h>

#include "graph/exec/strided_view.h"

namespace sparseflow::graph {
namespace {

using Ints = std::vector<int64_t>;

TEST(StridedView, ReshapesOfContiguousAndTransposedLayouts) {
  const StridedView x = StridedView::contiguous({2, 5, 3, 4});  // [B, T, H, D]
  EXPECT_EQ(x.strides, (Ints{60, 12, 4, 1}));
  // Any reshape of a contiguous layout has strides; extents 1 anywhere.
  auto r = reshapeView(x, {10, 1, 12});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->strides, (Ints{12, 12, 1}));
  // The heads split off: [B, H, T, D] with the tokens strided.
  const StridedView heads = transposeView(x, {0, 2, 1, 3});
  EXPECT_EQ(heads.shape, (Ints{2, 3, 5, 4}));
  EXPECT_EQ(heads.strides, (Ints{60, 4, 12, 1}));
  // Merging B and H is not a layout (B's stride is not H's times its extent), T and D neither;
  // splitting D is.
  EXPECT_FALSE(reshapeView(heads, {6, 5, 4}));
  EXPECT_FALSE(reshapeView(heads, {2, 3, 20}));
  r = reshapeView(heads, {2, 3, 5, 2, 2});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->strides, (Ints{60, 4, 12, 2, 1}));
  // The transpose's inverse gives back the operand's view.
  const StridedView back = untransposeView(heads, {0, 2, 1, 3});
  EXPECT_EQ(back.shape, x.shape);
  EXPECT_EQ(back.strides, x.strides);
  const StridedView keys = transposeView(x, {0, 2, 3, 1});  // Kᵀ per head: [B, H, D, T]
  EXPECT_EQ(keys.strides, (Ints{60, 4, 1, 12}));
  EXPECT_EQ(untransposeView(keys, {0, 2, 3, 1}).strides, x.strides);
}

TEST(StridedView, EveryElementOfAReshapedTransposeIsWhereTheOperatorsPutIt) {
  // [4, 6, 10] transposed to [6, 4, 10], then reshaped to [6, 2, 2, 5, 2]: element by element.
  const StridedView x = StridedView::contiguous({4, 6, 10});
  const StridedView t = transposeView(x, {1, 0, 2});
  const auto r = reshapeView(t, {6, 2, 2, 5, 2});
  ASSERT_TRUE(r);
  int64_t flat = 0;  // row-major position in the transposed value
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 10; ++k, ++flat) {
        const Ints idx = {flat / 40, flat / 20 % 2, flat / 10 % 2, flat / 2 % 5, flat % 2};
        int64_t offset = 0;
        for (size_t d = 0; d < idx.size(); ++d) offset += idx[d] * r->strides[d];
        ASSERT_EQ(offset, j * 60 + i * 10 + k) << i << " " << j << " " << k;
      }
    }
  }
}

TEST(StridedView, BroadcastsAndRefinements) {
  const StridedView mask = broadcastView(StridedView::contiguous({2, 1, 1, 7}), {2, 3, 7, 7});
  EXPECT_EQ(mask.strides, (Ints{7, 0, 0, 1}));
  EXPECT_EQ(broadcastView(StridedView::contiguous({7}), {3, 7}).strides, (Ints{0, 1}));
  EXPECT_EQ(commonRefinement({{6}, {2, 3}, {2, 3}}), (std::optional<Ints>{Ints{2, 3}}));
  EXPECT_EQ(commonRefinement({{2, 12}, {8, 3}, {24}}), (std::optional<Ints>{Ints{2, 4, 3}}));
  EXPECT_EQ(commonRefinement({{2, 1, 3}, {6}}), (std::optional<Ints>{Ints{2, 3}}));
  EXPECT_EQ(commonRefinement({{}, {}}), (std::optional<Ints>{Ints{}}));
  EXPECT_FALSE(commonRefinement({{2, 3}, {3, 2}}));
  EXPECT_FALSE(commonRefinement({{0, 3}, {0, 3}}));
}

}  // namespace
}  // namespace sparseflow::graph
