// Test helpers for the C ABI: owning wrappers of the handles, status checks with the message,
// and small matrices with their dense form. Uses only sparseflow.h, as a C caller would.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sparseflow/sparseflow.h"

namespace sparseflow_capi_test {

struct ContextDeleter {
  void operator()(SparseFlowContext* c) const { sparseflow_context_destroy(c); }
};
struct TensorDeleter {
  void operator()(SparseFlowTensor* t) const { sparseflow_tensor_destroy(t); }
};
struct LinearDeleter {
  void operator()(SparseFlowLinear* l) const { sparseflow_linear_destroy(l); }
};
using ContextPtr = std::unique_ptr<SparseFlowContext, ContextDeleter>;
using TensorPtr = std::unique_ptr<SparseFlowTensor, TensorDeleter>;
using LinearPtr = std::unique_ptr<SparseFlowLinear, LinearDeleter>;

/// A call that must succeed; on failure the message is printed.
#define ASSERT_SF_OK(call)                                                                \
  do {                                                                                    \
    const sparseflow_status status_ = (call);                                             \
    ASSERT_EQ(status_, SPARSEFLOW_STATUS_OK) << #call << ": " << sparseflow_last_error(); \
  } while (0)

/// A call that must fail with `code` and a message that contains each of the given strings.
#define EXPECT_SF_ERROR(call, code, ...)                                        \
  do {                                                                          \
    const sparseflow_status status_ = (call);                                   \
    EXPECT_EQ(status_, code) << #call << ": " << sparseflow_last_error();       \
    const std::string message_ = sparseflow_last_error();                       \
    for (const char* part_ : std::vector<const char*>{__VA_ARGS__}) {           \
      EXPECT_NE(message_.find(part_), std::string::npos)                        \
          << #call << ": message '" << message_ << "' lacks '" << part_ << "'"; \
    }                                                                           \
  } while (0)

/// A fresh context with `threads` threads (0: OpenMP's default).
inline ContextPtr makeContext(int32_t threads = 0) {
  SparseFlowContext* raw = nullptr;
  EXPECT_EQ(sparseflow_context_create(&raw), SPARSEFLOW_STATUS_OK) << sparseflow_last_error();
  EXPECT_EQ(sparseflow_context_set_threads(raw, threads), SPARSEFLOW_STATUS_OK);
  return ContextPtr(raw);
}

/// The tensor's dense values (empty on failure, with the failure recorded), read with one thread.
inline std::vector<double> denseOf(const SparseFlowTensor* tensor) {
  SparseFlowContext* context = nullptr;
  EXPECT_EQ(sparseflow_context_create(&context), SPARSEFLOW_STATUS_OK);
  EXPECT_EQ(sparseflow_context_set_threads(context, 1), SPARSEFLOW_STATUS_OK);
  int32_t rank = 0;
  EXPECT_EQ(sparseflow_tensor_get_rank(tensor, &rank), SPARSEFLOW_STATUS_OK);
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  EXPECT_EQ(sparseflow_tensor_get_shape(tensor, shape.data(), rank), SPARSEFLOW_STATUS_OK);
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::vector<double> dense(static_cast<size_t>(total));
  EXPECT_EQ(sparseflow_tensor_copy_to_dense(context, tensor, dense.data(), total),
            SPARSEFLOW_STATUS_OK)
      << sparseflow_last_error();
  sparseflow_context_destroy(context);
  return dense;
}

/// The tensor's format text.
inline std::string formatOf(const SparseFlowTensor* tensor) {
  size_t size = 0;
  EXPECT_EQ(sparseflow_tensor_get_format(tensor, nullptr, 0, &size), SPARSEFLOW_STATUS_OK);
  std::string text(size, '\0');
  EXPECT_EQ(sparseflow_tensor_get_format(tensor, text.data(), text.size(), nullptr),
            SPARSEFLOW_STATUS_OK);
  text.resize(size - 1);
  return text;
}

/// A path in the test's temporary directory that no other test process uses.
inline std::string tempPath(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "sparseflow_capi_" + info->test_suite_name() + "_" + info->name() +
         "_" + name;
}

/// A 4 × 6 matrix with a zero row and a zero column, in CSR (i32), with its dense form.
struct SmallMatrix {
  int64_t rows = 4, cols = 6;
  std::vector<int32_t> rowPtr = {0, 2, 2, 5, 7};
  std::vector<int32_t> colIdx = {0, 3, 1, 2, 5, 0, 4};
  std::vector<float> values = {1, 2, 3, 4, 5, 6, 7};
  std::vector<double> dense() const {
    std::vector<double> d(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int32_t p = rowPtr[r]; p < rowPtr[r + 1]; ++p) d[r * cols + colIdx[p]] = values[p];
    }
    return d;
  }
};

}  // namespace sparseflow_capi_test
