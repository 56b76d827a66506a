// The runtime's parts on their own, without the JIT: binding inputs (errors naming the tensor,
// conversion to the compiled format and dtype, extents, the work measure, the hash capacity, the
// shape and conversion caches), two-phase assembly driven by stand-in entry points (offsets from
// counts, arrays sized for the numeric phase, 32-bit overflow refused before allocating), the
// entry points' status codes, and the output pool's reuse rules.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "pipeline/stages.h"
#include "runtime/assembled_output.h"
#include "runtime/conversion_cache.h"
#include "runtime/kernel_args.h"
#include "runtime/output_pool.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"

namespace sparseflow::runtime {
namespace {

struct Compiled {
  expr::Statement statement;
  lower::LoweredKernel lowered;
};

/// The kernel lowered (no code generated: these tests stand in for the entry points).
Compiled lowered(const std::string& text, const std::map<std::string, std::string>& formats,
                 const std::map<std::string, DType>& dtypes = {}) {
  KernelOptions options;
  options.formats = formats;
  options.dtypes = dtypes;
  Compiled c{expr::parse(text), {}};
  c.lowered = pipeline::lowerStage(pipeline::checkStage(c.statement, options));
  return c;
}

Tensor matrix(int64_t rows, int64_t cols, const std::vector<double>& values, const char* format,
              DType dtype = DType::kF32) {
  return fromDense({rows, cols}, values.data(), Format::parse(format, 2), dtype);
}

std::string errorOf(const std::function<void()>& f, ErrorCode* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

TEST(BindInputs, ErrorsNameTheTensorOrParameter) {
  const Compiled k = lowered("y(i) = alpha * A(i,j) * x(j)", {{"A", "csr"}});
  const Tensor a = matrix(3, 4, std::vector<double>(12, 1.0), "csr");
  const Tensor x =
      fromDense({4}, std::vector<double>(4, 2.0).data(), Format::parse("dense", 1), DType::kF32);
  const Tensor x3 = matrix(1, 4, std::vector<double>(4, 2.0), "dense");
  const Tensor wrongLength =
      fromDense({5}, std::vector<double>(5, 2.0).data(), Format::parse("dense", 1), DType::kF32);
  const std::map<std::string, double> alpha{{"alpha", 2.0}};
  const std::vector<std::pair<std::function<void()>, std::string>> bad = {
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &x}, {"z", &x}}, alpha);
       },
       "tensor 'z' is not an input of the kernel"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", nullptr}}, alpha);
       },
       "tensor 'x' is null"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}}, alpha);
       },
       "needs tensor 'x' (dense)"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &x3}}, alpha);
       },
       "tensor 'x' has rank 2 but the kernel uses it with 1 indices"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &x}}, {});
       },
       "needs the scalar parameter 'alpha'"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &x}}, {{"alpha", 1}, {"beta", 2}});
       },
       "'beta' is not a scalar parameter"},
      {[&] {
         bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &wrongLength}}, alpha);
       },
       "j"},
  };
  for (const auto& [call, message] : bad) {
    ErrorCode code = ErrorCode::kInternal;
    const std::string what = errorOf(call, &code);
    EXPECT_NE(what.find(message), std::string::npos) << what << "\nwanted: " << message;
    EXPECT_NE(code, ErrorCode::kInternal) << what;
  }
}

TEST(BindInputs, ConvertsToTheCompiledFormatAndDtypeAndMeasuresTheWork) {
  const Compiled k = lowered("y(i) = alpha * A(i,j) * x(j)", {{"A", "csr"}}, {{"A", DType::kF64}});
  std::vector<double> values(6 * 5, 0.0);
  for (int e : {1, 7, 8, 13, 22, 29}) values[static_cast<size_t>(e)] = 0.5 + e;
  const Tensor coo = matrix(6, 5, values, "coo");  // f32 coo: converted to f64 csr
  const Tensor x = fromDense({5}, std::vector<double>{1, 2, 3, 4, 5}.data(),
                             Format::parse("dense", 1), DType::kF32);
  ShapeCache shapes;
  ConversionCache conversions;
  const BoundInputs bound = bindInputs(k.statement, k.lowered, {{"A", &coo}, {"x", &x}},
                                       {{"alpha", 3.0}}, &shapes, &conversions);
  ASSERT_EQ(bound.tensors.size(), 3u);
  const Tensor& a = *bound.tensors[1];
  EXPECT_EQ(a.format(), Format::parse("csr", 2));
  EXPECT_EQ(a.dtype(), DType::kF64);
  EXPECT_EQ(toDense(a), values);
  EXPECT_EQ(bound.tensors[2], &x);  // already as compiled: not copied
  // Extents in the kernel's index order, then the stored entries (6 + 5).
  std::vector<int64_t> want;
  for (const std::string& index : k.lowered.indexVars) want.push_back(index == "i" ? 6 : 5);
  want.push_back(6 + 5);
  EXPECT_EQ(bound.extents, want);
  EXPECT_EQ(bound.params, std::vector<double>{3.0});
  EXPECT_EQ(bound.outputShape, (std::vector<int64_t>{6}));
  // The next call with unchanged inputs reuses the conversion and the shapes.
  ShapeCache::Shapes known;
  EXPECT_TRUE(shapes.find({nullptr, &coo, &x}, &known));
  const BoundInputs again = bindInputs(k.statement, k.lowered, {{"A", &coo}, {"x", &x}},
                                       {{"alpha", 3.0}}, &shapes, &conversions);
  EXPECT_EQ(again.tensors[1], bound.tensors[1]);
  EXPECT_EQ(again.extents, bound.extents);
  // Changed in place, the input is converted again (contents, not addresses).
  Tensor changed = coo;
  static_cast<float*>(changed.mutableValues().data())[0] = 100.0f;
  const BoundInputs fresh = bindInputs(k.statement, k.lowered, {{"A", &changed}, {"x", &x}},
                                       {{"alpha", 3.0}}, &shapes, &conversions);
  EXPECT_NE(fresh.tensors[1], bound.tensors[1]);
  EXPECT_EQ(toDense(*fresh.tensors[1])[1], 100.0);
}

TEST(BindInputs, AHashWorkspaceGetsAPowerOfTwoOverTwiceTheRowBound) {
  const Compiled k =
      lowered("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}});
  ASSERT_TRUE(k.lowered.hashCapacity);
  std::vector<double> v(8 * 40, 0.0);
  for (size_t e = 0; e < v.size(); e += 7) v[e] = 1.0;
  const Tensor a = matrix(8, 8, std::vector<double>(v.begin(), v.begin() + 64), "csr");
  const Tensor b = matrix(8, 40, v, "csr");
  const BoundInputs bound = bindInputs(k.statement, k.lowered, {{"A", &a}, {"B", &b}}, {});
  const int64_t entries = a.numStored() + b.numStored();
  ASSERT_EQ(bound.extents.size(), k.lowered.indexVars.size() + 2);
  EXPECT_EQ(bound.extents[k.lowered.indexVars.size()], entries);
  // At least twice min(40 columns, entries), a power of two, and no more than needed.
  const int64_t capacity = bound.extents.back();
  const int64_t most = std::min<int64_t>(40, entries);
  EXPECT_GE(capacity, 2 * most);
  EXPECT_EQ(capacity & (capacity - 1), 0);
  EXPECT_LT(capacity / 2, std::max<int64_t>(16, 2 * most));
}

TEST(Assembly, CountsBecomeOffsetsAndTheNumericPhaseFillsTheArrays) {
  const Compiled k =
      lowered("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}});
  const Tensor a = matrix(4, 3, std::vector<double>(12, 1.0), "csr");
  const Tensor b = matrix(3, 5, std::vector<double>(15, 1.0), "csr");
  const BoundInputs bound = bindInputs(k.statement, k.lowered, {{"A", &a}, {"B", &b}}, {});
  const std::vector<int32_t> counts = {2, 0, 5, 1};
  int symbolicCalls = 0, numericCalls = 0;
  // Stand-ins for the generated phases: the symbolic one writes each row's count to pos[row + 1];
  // the numeric one sees pos as offsets and fills crd/values at them.
  auto symbolic = [&](const sf_tensor_arg* t, const int64_t*, const double*) {
    ++symbolicCalls;
    auto* pos = static_cast<int32_t*>(const_cast<void*>(t[0].pos[1]));
    for (size_t r = 0; r < counts.size(); ++r) pos[r + 1] = counts[r];
    return SF_KERNEL_OK;
  };
  auto numeric = [&](const sf_tensor_arg* t, const int64_t*, const double*) {
    ++numericCalls;
    const auto* pos = static_cast<const int32_t*>(t[0].pos[1]);
    auto* crd = static_cast<int32_t*>(const_cast<void*>(t[0].crd[1]));
    auto* vals = static_cast<float*>(t[0].values);
    for (int32_t r = 0; r < 4; ++r) {
      for (int32_t e = pos[r]; e < pos[r + 1]; ++e) {
        crd[e] = e - pos[r];
        vals[e] = static_cast<float>(10 * r + (e - pos[r]));
      }
    }
    return SF_KERNEL_OK;
  };
  const Tensor c = runAssembling(k.lowered, bound, symbolic, numeric, k.statement.text);
  EXPECT_EQ(symbolicCalls, 1);
  EXPECT_EQ(numericCalls, 1);
  EXPECT_EQ(c.shape(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(c.numStored(), 8);
  const std::vector<double> dense = toDense(c);
  std::vector<double> want(20, 0.0);
  for (int r = 0; r < 4; ++r) {
    for (int e = 0; e < counts[static_cast<size_t>(r)]; ++e)
      want[static_cast<size_t>(r * 5 + e)] = 10 * r + e;
  }
  EXPECT_EQ(dense, want);
}

TEST(Assembly, MoreEntriesThan32BitIndicesHoldAreRefusedBeforeAllocating) {
  const Compiled k =
      lowered("C(i,j) = A(i,k) * B(k,j)", {{"A", "csr"}, {"B", "csr"}, {"C", "csr"}});
  const Tensor a = matrix(3, 2, std::vector<double>(6, 1.0), "csr");
  const Tensor b = matrix(2, 2, std::vector<double>(4, 1.0), "csr");
  const BoundInputs bound = bindInputs(k.statement, k.lowered, {{"A", &a}, {"B", &b}}, {});
  bool numericRan = false;
  auto symbolic = [](const sf_tensor_arg* t, const int64_t*, const double*) {
    auto* pos = static_cast<int32_t*>(const_cast<void*>(t[0].pos[1]));
    for (int r = 0; r < 3; ++r) pos[r + 1] = 1 << 30;  // 3 * 2^30 > INT32_MAX
    return SF_KERNEL_OK;
  };
  auto numeric = [&](const sf_tensor_arg*, const int64_t*, const double*) {
    numericRan = true;
    return SF_KERNEL_OK;
  };
  ErrorCode code = ErrorCode::kInternal;
  const std::string what =
      errorOf([&] { runAssembling(k.lowered, bound, symbolic, numeric, k.statement.text); }, &code);
  EXPECT_EQ(code, ErrorCode::kOutOfRange);
  EXPECT_NE(what.find("output C has more than 2147483647 entries"), std::string::npos) << what;
  EXPECT_NE(what.find("csr@i64"), std::string::npos) << what;
  EXPECT_FALSE(numericRan);
}

TEST(CallEntry, StatusesBecomeErrorsNamingTheKernel) {
  const Compiled k = lowered("y(i) = A(i,j) * x(j)", {{"A", "csr"}});
  const Tensor a = matrix(2, 2, {1, 0, 0, 1}, "csr");
  const Tensor x =
      fromDense({2}, std::vector<double>{1, 1}.data(), Format::parse("dense", 1), DType::kF32);
  const BoundInputs bound = bindInputs(k.statement, k.lowered, {{"A", &a}, {"x", &x}}, {});
  Tensor y = makeOutput(k.lowered, bound);
  const std::vector<sf_tensor_arg> args = tensorArgs(k.lowered, bound, y);
  EXPECT_EQ(errorOf([&] {
              callEntry([](const sf_tensor_arg*, const int64_t*, const double*) { return 0; }, args,
                        bound, k.statement.text);
            }),
            "");
  ErrorCode code = ErrorCode::kInternal;
  std::string what = errorOf(
      [&] {
        callEntry([](const sf_tensor_arg*, const int64_t*,
                     const double*) { return SF_KERNEL_OUT_OF_MEMORY; },
                  args, bound, k.statement.text);
      },
      &code);
  EXPECT_EQ(code, ErrorCode::kOutOfMemory);
  EXPECT_NE(what.find("kernel 'y(i) = A(i,j) * x(j)': a scratch workspace could not be allocated"),
            std::string::npos)
      << what;
  what = errorOf(
      [&] {
        callEntry([](const sf_tensor_arg*, const int64_t*, const double*) { return 42; }, args,
                  bound, k.statement.text);
      },
      &code);
  EXPECT_EQ(code, ErrorCode::kInternal);
  EXPECT_NE(what.find("returned status 42"), std::string::npos) << what;
}

TEST(OutputPool, HandsBackOnlyBuffersNobodyHolds) {
  OutputPool pool;
  bool reused = true;
  Buffer first = pool.take(DType::kF32, 100, &reused);
  EXPECT_FALSE(reused);
  static_cast<float*>(first.data())[3] = 7.0f;
  pool.keep(first);
  // Still held by `first`: a new buffer, zeroed.
  Buffer second = pool.take(DType::kF32, 100, &reused);
  EXPECT_FALSE(reused);
  EXPECT_NE(second.data(), first.data());
  EXPECT_EQ(static_cast<float*>(second.data())[3], 0.0f);
  const void* address = first.data();
  first = Buffer();  // the caller lets go
  // Another dtype or size is not that buffer.
  EXPECT_NE(pool.take(DType::kF64, 100, &reused).data(), address);
  EXPECT_FALSE(reused);
  EXPECT_NE(pool.take(DType::kF32, 99, &reused).data(), address);
  Buffer back = pool.take(DType::kF32, 100, &reused);
  EXPECT_TRUE(reused);
  EXPECT_EQ(back.data(), address);
  EXPECT_EQ(static_cast<float*>(back.data())[3], 7.0f);  // contents are the caller's to reset
  // Taken, it is no longer kept.
  back = Buffer();
  EXPECT_NE(pool.take(DType::kF32, 100, &reused).data(), address);
}

TEST(OutputPool, KeepsTheLastFewAndNothingLarge) {
  OutputPool pool;
  std::vector<const void*> addresses;
  for (int k = 0; k < 3; ++k) {
    Buffer b = pool.take(DType::kF32, 10 + k);
    addresses.push_back(b.data());
    pool.keep(b);
  }
  bool reused = false;
  // The oldest (size 10) was dropped past kKept = 2; sizes 11 and 12 are still there.
  static_assert(OutputPool::kKept == 2);
  pool.take(DType::kF32, 10, &reused);
  EXPECT_FALSE(reused);
  EXPECT_EQ(pool.take(DType::kF32, 11, &reused).data(), addresses[1]);
  EXPECT_TRUE(reused);
  EXPECT_EQ(pool.take(DType::kF32, 12, &reused).data(), addresses[2]);
  EXPECT_TRUE(reused);
  // An output over kLargest is never kept (the kernel would hold its memory between calls).
  const int64_t big = OutputPool::kLargest / 4 + 1;
  {
    Buffer b = pool.take(DType::kF32, big);
    pool.keep(b);
  }
  pool.take(DType::kF32, big, &reused);
  EXPECT_FALSE(reused);
}

}  // namespace
}  // namespace sparseflow::runtime
