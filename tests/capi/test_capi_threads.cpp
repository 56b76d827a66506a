// The C ABI under concurrency: one SparseFlowLinear run from 8 threads at once gives exactly the
// serial results, one tensor is read by 8 threads at once, and the last error is per thread.
// Built and run under ThreadSanitizer by `make test-tsan` (see docs/capi.md).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_test_helpers.h"

// GCC defines __SANITIZE_THREAD__ under -fsanitize=thread; clang answers __has_feature.
#if defined(__SANITIZE_THREAD__)
#define SPARSEFLOW_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPARSEFLOW_TEST_TSAN 1
#endif
#endif

namespace sparseflow_capi_test {
namespace {

constexpr int kThreads = 8;

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

std::vector<float> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = value(rng);
  return v;
}

/// One layer (96 × 256, 2:4, bias+gelu) run by kThreads threads at once, each on its own input
/// and batch size (both kernel paths), `iterations` times; every result must equal, bit for bit,
/// the serial run of the same input. `threads` is the context's (OpenMP) thread count.
void runConcurrently(int32_t threads, int iterations) {
  ContextPtr context = makeContext(threads);
  const int64_t out = 96, in = 256;
  const std::vector<float> w = randomValues(out * in, 1);
  const int64_t shape[2] = {out, in};
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, shape,
                                              w.data(), out * in, &raw));
  TensorPtr dense(raw);
  sparseflow_nm_impact impact;
  ASSERT_SF_OK(sparseflow_nm_sparsify(context.get(), dense.get(), "2:4", &raw, &impact));
  TensorPtr compressed(raw);
  const std::vector<float> bias = randomValues(out, 2);
  SparseFlowLinear* layerRaw = nullptr;
  ASSERT_SF_OK(sparseflow_linear_create(context.get(), compressed.get(), bias.data(), out,
                                        "bias+gelu", &layerRaw));
  const LinearPtr layer(layerRaw);

  const int64_t batches[kThreads] = {1, 2, 3, 5, 8, 16, 17, 33};
  std::vector<std::vector<float>> inputs, serial;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(randomValues(static_cast<size_t>(batches[t] * in), 100 + t));
    serial.emplace_back(static_cast<size_t>(batches[t] * out));
    ASSERT_SF_OK(sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batches[t],
                                       inputs[t].data(), batches[t] * in, serial[t].data(),
                                       batches[t] * out));
  }

  std::atomic<int> failures{0}, mismatches{0};
  std::barrier start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<float> y(serial[t].size());
      start.arrive_and_wait();  // all threads inside run() together
      for (int i = 0; i < iterations; ++i) {
        std::memset(y.data(), 0xff, y.size() * sizeof(float));
        if (sparseflow_linear_run(layer.get(), SPARSEFLOW_DTYPE_F32, batches[t], inputs[t].data(),
                                  batches[t] * in, y.data(),
                                  batches[t] * out) != SPARSEFLOW_STATUS_OK) {
          ++failures;
        } else if (std::memcmp(y.data(), serial[t].data(), y.size() * sizeof(float)) != 0) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CapiThreads, OneLayerFromEightThreadsEqualsSerialRuns) {
  // One OpenMP thread inside each caller thread: libgomp is not TSan-instrumented, and a caller
  // that brings its own threads wants no nested team anyway.
  runConcurrently(1, 20);
}

TEST(CapiThreads, OneLayerFromEightThreadsWithTwoOpenMPThreadsEach) {
#ifdef SPARSEFLOW_TEST_TSAN
  GTEST_SKIP() << "libgomp's own synchronization is invisible to ThreadSanitizer";
#else
  runConcurrently(2, 10);
#endif
}

TEST(CapiThreads, OneKernelFromEightThreadsEqualsSerialRuns) {
  ContextPtr context = makeContext(1);
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  const TensorPtr A(raw);
  SparseFlowKernel* k = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_compile(context.get(),
                                         "C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))", "A=csr",
                                         nullptr, nullptr, &k));
  std::unique_ptr<SparseFlowKernel, decltype(&sparseflow_kernel_destroy)> kernel(
      k, &sparseflow_kernel_destroy);
  const int64_t n = 5;
  std::vector<TensorPtr> Bs, biases;
  std::vector<std::vector<double>> serial;
  std::vector<std::vector<float>> bValues, biasValues;  // the tensors view these (zero-copy)
  bValues.reserve(kThreads);
  biasValues.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    const std::vector<float>& b =
        bValues.emplace_back(randomValues(static_cast<size_t>(m.cols * n), 300 + t));
    const std::vector<float>& bias =
        biasValues.emplace_back(randomValues(static_cast<size_t>(n), 400 + t));
    const int64_t bShape[2] = {m.cols, n}, biasShape[1] = {n};
    ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 2, bShape,
                                                b.data(), m.cols * n, &raw));
    Bs.emplace_back(raw);
    ASSERT_SF_OK(sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 1, biasShape,
                                                bias.data(), n, &raw));
    biases.emplace_back(raw);
    const char* names[3] = {"A", "B", "b"};
    const SparseFlowTensor* tensors[3] = {A.get(), Bs.back().get(), biases.back().get()};
    ASSERT_SF_OK(sparseflow_kernel_run(context.get(), kernel.get(), names, tensors, 3, nullptr,
                                       nullptr, 0, &raw));
    const TensorPtr c(raw);
    serial.push_back(denseOf(c.get()));
  }
  std::atomic<int> wrong{0};
  std::barrier start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      const char* names[3] = {"A", "B", "b"};
      const SparseFlowTensor* tensors[3] = {A.get(), Bs[t].get(), biases[t].get()};
      start.arrive_and_wait();
      for (int i = 0; i < 10; ++i) {
        SparseFlowTensor* out = nullptr;
        if (sparseflow_kernel_run(context.get(), kernel.get(), names, tensors, 3, nullptr, nullptr,
                                  0, &out) != SPARSEFLOW_STATUS_OK) {
          if (++wrong == 1) ADD_FAILURE() << sparseflow_last_error();
          continue;
        }
        std::vector<double> values(serial[t].size());
        if (sparseflow_tensor_copy_to_dense(context.get(), out, values.data(),
                                            static_cast<int64_t>(values.size())) !=
                SPARSEFLOW_STATUS_OK ||
            values != serial[t]) {
          ++wrong;
        }
        sparseflow_tensor_destroy(out);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CapiThreads, OneTensorReadByEightThreads) {
  ContextPtr context = makeContext(1);
  SmallMatrix m;
  SparseFlowTensor* raw = nullptr;
  ASSERT_SF_OK(sparseflow_tensor_create_csr(context.get(), SPARSEFLOW_DTYPE_F32, m.rows, m.cols,
                                            SPARSEFLOW_DTYPE_I32, m.rowPtr.data(), m.colIdx.data(),
                                            m.values.data(), 7, &raw));
  const TensorPtr csr(raw);
  const std::vector<double> expected = m.dense();
  const char* formats[kThreads] = {"csc", "coo", "bsr:2x2", "ell", "hyb", "dcsr", "dense", "csr"};
  std::atomic<int> wrong{0};
  std::barrier start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < 10; ++i) {
        SparseFlowTensor* converted = nullptr;
        std::vector<double> dense(expected.size());
        int64_t nnz = 0;
        if (sparseflow_tensor_convert(context.get(), csr.get(), formats[t], &converted) !=
                SPARSEFLOW_STATUS_OK ||
            sparseflow_tensor_copy_to_dense(context.get(), converted, dense.data(),
                                            static_cast<int64_t>(dense.size())) !=
                SPARSEFLOW_STATUS_OK ||
            sparseflow_tensor_get_nnz(csr.get(), &nnz) != SPARSEFLOW_STATUS_OK ||
            dense != expected || nnz != 7) {
          ++wrong;
        }
        sparseflow_tensor_destroy(converted);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CapiThreads, LastErrorIsPerThread) {
  ContextPtr context = makeContext(1);
  std::atomic<int> wrong{0};
  std::barrier step(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      // Every thread fails with its own file name, then waits until all have failed.
      const std::string path = "/nonexistent-sparseflow-dir/thread_" + std::to_string(t) + ".mtx";
      SparseFlowTensor* tensor = nullptr;
      if (sparseflow_tensor_read(context.get(), path.c_str(), nullptr, SPARSEFLOW_DTYPE_F32,
                                 &tensor) != SPARSEFLOW_STATUS_IO_ERROR) {
        ++wrong;
      }
      step.arrive_and_wait();
      if (std::string(sparseflow_last_error()).find(path) == std::string::npos) ++wrong;
      step.arrive_and_wait();
      // Even threads succeed: their message clears, the odd threads' messages stay.
      int32_t threads = 0;
      if (t % 2 == 0 &&
          sparseflow_context_get_threads(context.get(), &threads) != SPARSEFLOW_STATUS_OK) {
        ++wrong;
      }
      step.arrive_and_wait();
      const std::string message = sparseflow_last_error();
      if (t % 2 == 0 ? !message.empty() : message.find(path) == std::string::npos) ++wrong;
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CapiThreads, HandlesAndOptionsMadeAndDestroyedFromEightThreads) {
  // The handle registry and an options handle shared by all threads: creates, destroys, stale
  // uses and setters race with compiles that read the options (hand-tuned CSR SpMM: no compiler).
  ContextPtr context = makeContext(1);
  SparseFlowKernelOptions* shared = nullptr;
  ASSERT_SF_OK(sparseflow_kernel_options_create(&shared));
  ASSERT_SF_OK(sparseflow_kernel_options_set_format(shared, "A", "csr"));
  std::atomic<int> wrong{0};
  std::barrier start(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      const std::vector<float> values = {1.0f, 2.0f, float(t)};
      const int64_t shape[1] = {3};
      start.arrive_and_wait();
      for (int i = 0; i < 50; ++i) {
        SparseFlowTensor* tensor = nullptr;
        if (sparseflow_tensor_create_dense(context.get(), SPARSEFLOW_DTYPE_F32, 1, shape,
                                           values.data(), 3, &tensor) != SPARSEFLOW_STATUS_OK ||
            sparseflow_tensor_destroy(tensor) != SPARSEFLOW_STATUS_OK) {
          ++wrong;
        }
        int32_t rank = 0;
        if (sparseflow_tensor_get_rank(tensor, &rank) != SPARSEFLOW_STATUS_INVALID_ARGUMENT)
          ++wrong;
        if (sparseflow_kernel_options_set_schedule(shared, t % 2 ? "" : nullptr) !=
                SPARSEFLOW_STATUS_OK ||
            sparseflow_kernel_options_set_dtype(shared, "B", SPARSEFLOW_DTYPE_F32) !=
                SPARSEFLOW_STATUS_OK) {
          ++wrong;
        }
        if (i % 10 == 0) {
          SparseFlowKernel* kernel = nullptr;
          if (sparseflow_kernel_compile_with_options(context.get(), "C(i,j) = A(i,k) * B(k,j)",
                                                     shared, &kernel) != SPARSEFLOW_STATUS_OK) {
            if (++wrong == 1) ADD_FAILURE() << sparseflow_last_error();
          }
          sparseflow_kernel_destroy(kernel);
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  ASSERT_SF_OK(sparseflow_kernel_options_destroy(shared));
}

}  // namespace
}  // namespace sparseflow_capi_test
