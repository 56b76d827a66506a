// The kernel providers through Kernel, as users spell kernels: each spelling (operand order, GEMV,
// batched 3-d inputs, `+=`, every fused epilogue) reaches the provider expected, on every SIMD
// target, against a float64 reference on random inputs drawn fresh each run; kernels no
// hand-tuned provider takes (mixed dtypes, a schedule, a sparse output) fall to generated code and
// say why.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "e2e/reference_eval.h"
#include "expr/expr.h"
#include "hwy/targets.h"
#include "sparseflow/build.h"
#include "sparseflow/kernel.h"

namespace sparseflow {
namespace {

const bool kCacheDirSet = [] {
  return setenv("SPARSEFLOW_CACHE_DIR", SPARSEFLOW_TEST_CACHE_DIR, 0) == 0;
}();

// Under the sanitizers (10-20x slower) the providers run on the best and the baseline SIMD target
// with smaller shapes; tests/unit/kernels covers every target of each kernel there too.
#ifdef SPARSEFLOW_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

/// The SIMD targets to run on: all that this CPU runs, or under the sanitizers the best and the
/// baseline.
std::vector<int64_t> targetsToRun() {
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  if (kSanitized && targets.size() > 2) targets = {targets.front(), targets.back()};
  return targets;
}

struct Case {
  std::string kernel;
  std::map<std::string, std::string> formats;
  std::string provider;
  DType dtype = DType::kF32;  ///< of every tensor, the output's too
  std::map<std::string, double> params = {};
};

/// Every tensor of the statement with its indices.
void collect(const expr::Expr& e, std::map<std::string, std::vector<std::string>>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    out.emplace(a->tensor, a->indices);
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    collect(*u->operand, out);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    collect(*b->lhs, out);
    collect(*b->rhs, out);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
    collect(*r->body, out);
  }
}

/// Random dense values; a 2:4 operand keeps two of every four along its last index, a csr one
/// about a third of its entries (and some empty rows).
std::vector<double> randomValues(const std::vector<int64_t>& shape, const std::string& format,
                                 std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::uniform_real_distribution<double> p(0, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  if (format == "2:4") {
    for (int64_t g = 0; g + 4 <= n; g += 4) {
      const int64_t keep = std::uniform_int_distribution<int64_t>(0, 5)(rng);
      static const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
      for (int t = 0; t < 4; ++t) {
        if (t != pairs[keep][0] && t != pairs[keep][1]) v[static_cast<size_t>(g + t)] = 0;
      }
    }
  } else if (format != "dense") {
    const int64_t cols = shape.back();
    for (int64_t e = 0; e < n; ++e) {
      if (p(rng) > 0.3 || (e / cols) % 7 == 3) v[static_cast<size_t>(e)] = 0;
    }
  }
  return v;
}

/// Runs `c` with extents drawn per index (`pinned` fixes some) and checks provider and values,
/// for a new output and, into an existing one, for `=` (overwritten) or `+=` (added).
void checkCase(const Case& c, std::mt19937& rng, const std::map<std::string, int64_t>& pinned = {},
               const KernelOptions& base = {}) {
  SCOPED_TRACE(c.kernel);
  const expr::Statement statement = expr::parse(c.kernel);
  std::map<std::string, std::vector<std::string>> uses;
  collect(*statement.rhs, uses);
  std::map<std::string, int64_t> extents = pinned;
  std::uniform_int_distribution<int64_t> extent(3, kSanitized ? 16 : 40);
  std::map<std::string, expr::TensorInfo> infos;
  std::map<std::string, testing::DenseRef> refs;
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, indices] : uses) {
    std::vector<int64_t> shape;
    for (const std::string& index : indices) {
      auto [it, added] = extents.emplace(index, extent(rng));
      // 2:4 groups run along the last index: keep it a multiple of 4.
      if (added && c.formats.count(name) && c.formats.at(name) == "2:4" && index == indices.back())
        it->second = 4 * (1 + it->second / 4);
      shape.push_back(it->second);
    }
    auto f = c.formats.find(name);
    const std::string format = f == c.formats.end() ? "dense" : f->second;
    refs[name] = {shape, randomValues(shape, format, rng)};
    if (c.dtype == DType::kF32) {  // the reference reads what the kernel reads
      for (double& v : refs[name].values) v = static_cast<float>(v);
    }
    infos[name] = {shape, c.dtype};
    tensors.emplace(name,
                    fromDense(shape, refs[name].values.data(),
                              Format::parse(format, static_cast<int32_t>(shape.size())), c.dtype));
  }
  std::vector<int64_t> outShape;
  for (const std::string& index : statement.lhs.indices) outShape.push_back(extents.at(index));
  infos[statement.lhs.tensor] = {outShape, c.dtype};
  const expr::CheckedKernel checked = expr::check(statement, infos);
  std::vector<double> initial = randomValues(outShape, "dense", rng);
  const std::vector<double> want = testing::referenceEval(checked, refs, c.params);
  KernelOptions options = base;
  options.formats = c.formats;
  if (c.dtype != DType::kF32) {
    for (const auto& [name, info] : infos) options.dtypes[name] = c.dtype;
  }
  const Kernel kernel = Kernel::compile(c.kernel, options);
  ASSERT_EQ(kernel.provider(), c.provider) << kernel.describe();
  std::map<std::string, const Tensor*> inputs;
  for (const auto& [name, t] : tensors) inputs[name] = &t;
  const Tensor fresh = kernel.run(inputs, c.params);
  Tensor into = fromDense(outShape, initial.data(),
                          Format::parse("dense", static_cast<int32_t>(outShape.size())), c.dtype);
  kernel.run(inputs, into, c.params);
  const std::vector<double> got = toDense(fresh), gotInto = toDense(into);
  ASSERT_EQ(got.size(), want.size());
  // f32 rounds every product; f64 only sums in another order.
  const double relative = c.dtype == DType::kF64 ? 1e-11 : 1e-4;
  for (size_t e = 0; e < want.size(); ++e) {
    const double tolerance = relative * (1 + std::abs(want[e]));
    ASSERT_NEAR(got[e], want[e], tolerance) << "element " << e << "\n" << kernel.describe();
    const double wantInto = (statement.accumulate ? initial[e] : 0.0) + want[e];
    ASSERT_NEAR(gotInto[e], wantInto, tolerance + relative / 10 * std::abs(wantInto))
        << "element " << e << " run into an output\n"
        << kernel.describe();
  }
}

uint32_t freshSeed() {
  return static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

const std::vector<std::string>& epilogues() {
  static const std::vector<std::string> list = {"",          "relu", "silu",   "gelu",
                                                "gelu_tanh", "tanh", "sigmoid"};
  return list;
}

/// `body` wrapped in each activation, with and without `bias` added (either side of the sum).
std::vector<std::string> withEpilogues(const std::string& lhs, const std::string& body,
                                       const std::string& bias) {
  std::vector<std::string> out;
  for (const std::string& act : epilogues()) {
    for (int b = 0; b < 3; ++b) {
      std::string e = b == 0 ? body : (b == 1 ? body + " + " + bias : bias + " + " + body);
      out.push_back(lhs + " = " + (act.empty() ? e : act + "(" + e + ")"));
    }
  }
  return out;
}

TEST(Providers, EverySpellingReachesItsProviderOnEveryTarget) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<Case> cases;
  const std::map<std::string, std::string> csrA{{"A", "csr"}}, nmW{{"W", "2:4"}},
      csrW{{"W", "csr"}};
  for (const std::string& k : withEpilogues("C(i,j)", "A(i,k) * B(k,j)", "b(j)"))
    cases.push_back({k, csrA, "csr_spmm"});
  for (const std::string& k : withEpilogues("C(i,j)", "B(k,j) * A(i,k)", "r(i)"))
    cases.push_back({k, csrA, "csr_spmm"});
  for (const std::string& k : withEpilogues("y(i)", "A(i,j) * x(j)", "b(i)"))
    cases.push_back({k, csrA, "csr_spmm"});
  for (const std::string& k : withEpilogues("Y(n,o)", "X(n,i) * W(o,i)", "b(o)"))
    cases.push_back({k, csrW, "csr_spmm"});
  for (const std::string& k : withEpilogues("Y(n,o)", "W(o,i) * X(n,i)", "b(o)"))
    cases.push_back({k, nmW, "nm_linear"});
  for (const std::string& k : withEpilogues("y(o)", "W(o,i) * x(i)", "b(o)"))
    cases.push_back({k, nmW, "nm_linear"});
  for (const std::string& k : withEpilogues("Y(b,t,o)", "X(b,t,i) * W(o,i)", "c(o)"))
    cases.push_back({k, nmW, "nm_linear"});
  for (const std::string& k : withEpilogues("Y(n,o)", "X(n,i) * W(o,i)", "b(o)"))
    cases.push_back({k, {}, "dense_linear"});
  for (const std::string& k : withEpilogues("y(o)", "x(i) * W(o,i)", "b(o)"))
    cases.push_back({k, {}, "dense_linear"});
  for (const std::string& k : withEpilogues("C(i,j)", "A(i,k) * B(k,j)", "b(j)"))
    cases.push_back({k, {}, "dense_linear"});
  // A transposed first factor or output: X transposed on each call, every epilogue.
  for (const std::string& k : withEpilogues("C(i,j)", "A(k,i) * B(k,j)", "b(j)"))
    cases.push_back({k, {}, "dense_linear"});
  for (const std::string& k : withEpilogues("C(j,i)", "B(k,j) * A(i,k)", "b(i)"))
    cases.push_back({k, {}, "dense_linear"});
  cases.push_back({"C(j,i) += A(i,k) * B(k,j) + R(j,i)", {}, "dense_linear"});
  cases.push_back({"C(i,j) = gelu(A(k,i) * B(j,k) + b(j))", {}, "dense_linear", DType::kF64});
  cases.push_back({"C(i,j) = A(k,i) * B(k,j) + r(i)", {}, "generated"});
  // `+=` adds the product (after its epilogue) to the output.
  cases.push_back({"C(i,j) += A(i,k) * B(k,j)", csrA, "csr_spmm"});
  cases.push_back({"C(i,j) += relu(A(i,k) * B(k,j) + b(j))", csrA, "csr_spmm"});
  cases.push_back({"y(o) += W(o,i) * x(i)", nmW, "nm_linear"});
  cases.push_back({"Y(n,o) += gelu(X(n,i) * W(o,i) + b(o))", nmW, "nm_linear"});
  cases.push_back({"Y(n,o) += X(n,i) * W(o,i)", csrW, "csr_spmm"});
  cases.push_back({"Y(n,o) += silu(X(n,i) * W(o,i) + b(o))", {}, "dense_linear"});
  // f64 throughout: the CSR SpMM's f64 instantiation, every spelling and epilogue.
  for (const std::string& k : withEpilogues("C(i,j)", "A(i,k) * B(k,j)", "b(j)"))
    cases.push_back({k, csrA, "csr_spmm", DType::kF64});
  for (const std::string& k : withEpilogues("y(i)", "A(i,j) * x(j)", "b(i)"))
    cases.push_back({k, csrA, "csr_spmm", DType::kF64});
  for (const std::string& k : withEpilogues("Y(n,o)", "X(n,i) * W(o,i)", "b(o)"))
    cases.push_back({k, csrW, "csr_spmm", DType::kF64});
  cases.push_back({"C(i,j) += gelu(A(i,k) * B(k,j) + b(j))", csrA, "csr_spmm", DType::kF64});
  // f64 throughout, dense: DenseLinear's f64 tile (accumulated in f64) for GEMM, GEMV and the
  // SpMM spelling.
  for (const std::string& k : withEpilogues("Y(n,o)", "X(n,i) * W(o,i)", "b(o)"))
    cases.push_back({k, {}, "dense_linear", DType::kF64});
  for (const std::string& k : withEpilogues("y(o)", "W(o,i) * x(i)", "b(o)"))
    cases.push_back({k, {}, "dense_linear", DType::kF64});
  for (const std::string& k : withEpilogues("C(i,j)", "A(i,k) * B(k,j)", "b(j)"))
    cases.push_back({k, {}, "dense_linear", DType::kF64});
  cases.push_back({"Y(n,o) += silu(X(n,i) * W(o,i) + b(o))", {}, "dense_linear", DType::kF64});
  // f64 throughout with W in 2:4: NMLinear's f64 kernel (accumulated in f64).
  for (const std::string& k : withEpilogues("Y(n,o)", "W(o,i) * X(n,i)", "b(o)"))
    cases.push_back({k, nmW, "nm_linear", DType::kF64});
  for (const std::string& k : withEpilogues("y(o)", "W(o,i) * x(i)", "b(o)"))
    cases.push_back({k, nmW, "nm_linear", DType::kF64});
  cases.push_back({"Y(b,t,o) += gelu(X(b,t,i) * W(o,i) + c(o))", nmW, "nm_linear", DType::kF64});
  for (int64_t target : targetsToRun()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target));
    for (const Case& c : cases) checkCase(c, rng);
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(Providers, ScaleResidualAndClampFuseIntoEveryProviderOnEveryTarget) {
  // The rest of the element-wise epilogue: a scale (a parameter or a literal, around the sum,
  // inside it, as a division or a minus), a residual indexed as the output, added before the
  // activation or after it, and a clamp of the activation's result (clamp, minimum, maximum, either
  // nesting), in the SpMM and the linear layouts, GEMV and SpMV, `+=`, f64, under a row softmax;
  // each provider fuses them into its store, against float64.
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::map<std::string, std::string> csrA{{"A", "csr"}}, nmW{{"W", "2:4"}},
      csrW{{"W", "csr"}}, bsrA{{"A", "bsr:4x4"}}, bsrW{{"W", "bsr:4x4"}};
  const std::map<std::string, double> alpha{{"alpha", -0.75}};
  std::vector<Case> cases = {
      {"C(i,j) = relu(alpha * sum(k, A(i,k) * B(k,j)) + b(j) + R(i,j))", csrA, "csr_spmm",
       DType::kF32, alpha},
      {"C(i,j) = gelu(A(i,k) * B(k,j) + b(j)) + R(i,j)", csrA, "csr_spmm"},
      {"C(i,j) = R(i,j) + A(i,k) * B(k,j) / 8", csrA, "csr_spmm"},
      {"C(i,j) = -A(i,k) * B(k,j) + r(i)", csrA, "csr_spmm"},
      {"C(i,j) = R(i,j) + tanh(B(k,j) * A(i,k) * 2 + r(i))", csrA, "csr_spmm"},
      {"C(i,j) += alpha * A(i,k) * B(k,j) + R(i,j)", csrA, "csr_spmm", DType::kF32, alpha},
      {"C(i,j) = softmax(j, A(i,k) * B(k,j) / 4 + M(i,j))", csrA, "csr_spmm"},
      {"y(i) = alpha * A(i,j) * x(j) + z(i)", csrA, "csr_spmm", DType::kF32, alpha},
      {"y(i) = silu(A(i,j) * x(j) + b(i)) + z(i)", csrA, "csr_spmm"},
      {"C(i,j) = sigmoid(3 * A(i,k) * B(k,j) + b(j) + R(i,j))", csrA, "csr_spmm", DType::kF64},
      {"C(i,j) += relu(A(i,k) * B(k,j)) + R(i,j)", csrA, "csr_spmm", DType::kF64},
      {"y(i) = alpha * A(i,j) * x(j) + z(i)", csrA, "csr_spmm", DType::kF64, alpha},
      {"Y(n,o) = X(n,i) * W(o,i) + b(o) + R(n,o)", csrW, "csr_spmm"},
      {"Y(n,o) = relu(alpha * X(n,i) * W(o,i) + b(o)) + R(n,o)", csrW, "csr_spmm", DType::kF32,
       alpha},
      {"Y(n,o) += gelu_tanh(X(n,i) * W(o,i) / 2 + R(n,o))", csrW, "csr_spmm"},
      {"y(o) = W(o,i) * x(i) * 0.5 + r(o)", csrW, "csr_spmm"},
      {"Y(n,o) = silu(X(n,i) * W(o,i) + b(o) + R(n,o))", csrW, "csr_spmm", DType::kF64},
      {"C(i,j) = tanh(A(i,k) * B(k,j) + R(i,j))", bsrA, "bsr_spmm"},
      {"C(i,j) = alpha * A(i,k) * B(k,j) + b(j) + R(i,j)", bsrA, "bsr_spmm", DType::kF64, alpha},
      {"C(i,j) += relu(A(i,k) * B(k,j)) + R(i,j)", bsrA, "bsr_spmm"},
      {"Y(n,o) = X(n,i) * W(o,i) + R(n,o)", bsrW, "generated"},
      {"Y(n,o) = clamp(alpha * X(n,i) * W(o,i) + b(o), -0.5, 0.5)", bsrW, "bsr_spmm", DType::kF32,
       alpha},
      {"C(i,j) = A(i,k) * B(k,j) / 3", csrA, "generated"},  // not a power of two: no reciprocal
      {"Y(n,o) = alpha * W(o,i) * X(n,i) + b(o) + R(n,o)", nmW, "nm_linear", DType::kF32, alpha},
      {"y(o) = gelu(W(o,i) * x(i)) + r(o)", nmW, "nm_linear"},
      {"Y(b,t,o) = relu(X(b,t,i) * W(o,i) + c(o) + R(b,t,o))", nmW, "nm_linear"},
      {"Y(n,o) += X(n,i) * W(o,i) * 2 + R(n,o)", nmW, "nm_linear"},
      {"Y(n,o) = tanh(alpha * W(o,i) * X(n,i) + b(o)) + R(n,o)", nmW, "nm_linear", DType::kF64,
       alpha},
      {"Y(n,o) = layernorm(o, X(n,i) * W(o,i) + b(o) + R(n,o))", nmW, "nm_linear"},
      {"Y(n,o) = X(n,i) * W(o,i) * 0.5 + R(n,o)", {}, "dense_linear"},
      {"C(i,j) = sigmoid(A(i,k) * B(k,j) + b(j)) + R(i,j)", {}, "dense_linear"},
      {"y(o) = alpha * x(i) * W(o,i) + r(o)", {}, "dense_linear", DType::kF32, alpha},
      {"Y(n,o) = relu(X(n,i) * W(o,i) + b(o) + R(n,o))", {}, "dense_linear", DType::kF64},
      {"C(i,j) = clamp(A(i,k) * B(k,j) + b(j), -0.5, 0.5)", csrA, "csr_spmm"},
      {"C(i,j) = minimum(relu(A(i,k) * B(k,j)), 0.25) + R(i,j)", csrA, "csr_spmm"},
      {"C(i,j) = maximum(gelu(A(i,k) * B(k,j)), -0.1)", csrA, "csr_spmm", DType::kF64},
      {"C(i,j) += clamp(silu(A(i,k) * B(k,j)), -0.2, 0.3)", csrA, "csr_spmm"},
      {"y(i) = clamp(A(i,j) * x(j), -1, 1)", csrA, "csr_spmm"},
      {"Y(n,o) = clamp(X(n,i) * W(o,i) + b(o), 0, 0.5)", csrW, "csr_spmm"},
      // csr_linear's tile: a scale and a clamp without a residual, stored and added, f32 and f64.
      {"Y(n,o) = relu(X(n,i) * W(o,i) * 0.5 + b(o))", csrW, "csr_spmm"},
      {"Y(n,o) += clamp(alpha * X(n,i) * W(o,i) + b(o), -0.5, 0.5)", csrW, "csr_spmm", DType::kF32,
       alpha},
      {"Y(n,o) = clamp(gelu(X(n,i) * W(o,i) / 4), -0.1, 0.2)", csrW, "csr_spmm", DType::kF64},
      {"Y(n,o) = clamp(relu(X(n,i) * W(o,i) + b(o)), -1, 0.5)", csrW, "csr_spmm"},  // relu's 0 wins
      {"Y(n,o) = minimum(relu(X(n,i) * W(o,i)), 0.25)", csrW, "csr_spmm"},
      {"C(i,j) = clamp(tanh(A(i,k) * B(k,j)), -0.5, 0.5) + R(i,j)", bsrA, "bsr_spmm"},
      {"Y(n,o) = clamp(relu(W(o,i) * X(n,i) + b(o)), 0, 0.75)", nmW, "nm_linear"},
      {"y(o) = minimum(W(o,i) * x(i), 0.5)", nmW, "nm_linear", DType::kF64},
      {"Y(n,o) = maximum(minimum(X(n,i) * W(o,i), 0.5), -0.5)", {}, "dense_linear"},
      {"C(i,j) = clamp(sigmoid(A(i,k) * B(k,j)), 0.3, 0.7)", {}, "dense_linear", DType::kF64},
      {"C(i,j) = softmax(j, clamp(A(i,k) * B(k,j), -1, 1))", csrA, "csr_spmm"},
      // Not fused: maximum(minimum(x, hi), lo) with lo > hi, a bound that is a parameter.
      {"C(i,j) = maximum(minimum(A(i,k) * B(k,j), -1), 1)", csrA, "generated"},
      {"C(i,j) = clamp(A(i,k) * B(k,j), alpha, 1)", csrA, "generated", DType::kF32, alpha},
      // Not fused: a transposed residual, two parameters, a scale that is a tensor.
      {"C(i,j) = A(i,k) * B(k,j) + R(j,i)", csrA, "generated"},
      {"C(i,j) = alpha * beta * A(i,k) * B(k,j)",
       csrA,
       "generated",
       DType::kF32,
       {{"alpha", 2}, {"beta", 3}}},
      {"C(i,j) = s() * A(i,k) * B(k,j)", csrA, "generated"},
  };
  for (int64_t target : targetsToRun()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target));
    for (const Case& c : cases) checkCase(c, rng);
    // Rows wider than a register panel (the epilogue per panel; R read at each panel's columns)
    // and batches past one tile of csr_linear.
    checkCase({"C(i,j) = relu(alpha * A(i,k) * B(k,j) + b(j)) + R(i,j)", csrA, "csr_spmm",
               DType::kF32, alpha},
              rng, {{"j", 300}, {"i", 30}, {"k", 50}});
    checkCase({"Y(n,o) = relu(X(n,i) * W(o,i) + R(n,o))", csrW, "csr_spmm"}, rng,
              {{"n", 77}, {"o", 45}, {"i", 33}});
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(Providers, AResidualThatIsTheOutputItselfIsReadBeforeItIsOverwritten) {
  // `Y = act(X·Wᵀ) + R` run into R itself (the in-place residual of a model): every provider
  // reads R's old values (a copy), not the outputs it has stored, and says what it fused.
  std::mt19937 rng(freshSeed());
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"csr", "csr_spmm"}, {"2:4", "nm_linear"}, {"dense", "dense_linear"}};
  for (const auto& [format, provider] : cases) {
    for (const std::string text :
         {"Y(n,o) = relu(X(n,i) * W(o,i)) + R(n,o)", "Y(n,o) = R(n,o) + 0.5 * X(n,i) * W(o,i)"}) {
      SCOPED_TRACE(text + " with W " + format);
      KernelOptions options;
      options.formats = {{"W", format}};
      const Kernel kernel = Kernel::compile(text, options);
      ASSERT_EQ(kernel.provider(), provider) << kernel.describe();
      EXPECT_NE(kernel.describe().find("+ R(n,o)"), std::string::npos) << kernel.describe();
      std::vector<double> x(37 * 24), w(20 * 24), r(37 * 20);
      for (double& v : x) v = static_cast<float>(u(rng));
      for (double& v : w) v = static_cast<float>(u(rng));
      for (double& v : r) v = static_cast<float>(u(rng));
      for (size_t e = 0; e < w.size(); e += 4) w[e + 1] = w[e + 3] = 0;  // 2:4 and sparse
      const Tensor tX = fromDense({37, 24}, x.data(), Format::parse("dense", 2));
      const Tensor tW = fromDense({20, 24}, w.data(), Format::parse(format, 2));
      Tensor tR = fromDense({37, 20}, r.data(), Format::parse("dense", 2));
      kernel.run({{"X", &tX}, {"W", &tW}, {"R", &tR}}, tR);
      const std::vector<double> got = toDense(tR);
      for (int64_t n = 0; n < 37; ++n) {
        for (int64_t o = 0; o < 20; ++o) {
          double p = 0;
          for (int64_t i = 0; i < 24; ++i) p += x[n * 24 + i] * w[o * 24 + i];
          const double old = r[n * 20 + o];
          const double want = text[9] == 'r' ? std::max(p, 0.0) + old : old + 0.5 * p;
          ASSERT_NEAR(got[n * 20 + o], want, 1e-4 * (1 + std::abs(want))) << n << ", " << o;
        }
      }
    }
  }
  // The SpMM layout, where the CSR kernel applies the epilogue to outputs it has stored.
  for (const auto& [format, provider] :
       {std::pair{"csr", "csr_spmm"}, {"bsr:2x2", "bsr_spmm"}, {"dense", "dense_linear"}}) {
    SCOPED_TRACE(format);
    KernelOptions options;
    options.formats = {{"A", format}};
    const Kernel kernel = Kernel::compile("C(i,j) = gelu(A(i,k) * B(k,j)) + C0(i,j)", options);
    ASSERT_EQ(kernel.provider(), provider) << kernel.describe();
    std::vector<double> a(30 * 26), b(26 * 70), r(30 * 70);
    for (double& v : a) v = u(rng) < 0 ? 0.0 : static_cast<float>(u(rng));
    for (double& v : b) v = static_cast<float>(u(rng));
    for (double& v : r) v = static_cast<float>(u(rng));
    const Tensor tA = fromDense({30, 26}, a.data(), Format::parse(format, 2));
    const Tensor tB = fromDense({26, 70}, b.data(), Format::parse("dense", 2));
    Tensor tR = fromDense({30, 70}, r.data(), Format::parse("dense", 2));
    kernel.run({{"A", &tA}, {"B", &tB}, {"C0", &tR}}, tR);
    const std::vector<double> got = toDense(tR);
    for (int64_t i = 0; i < 30; ++i) {
      for (int64_t j = 0; j < 70; ++j) {
        double p = 0;
        for (int64_t k = 0; k < 26; ++k) p += a[i * 26 + k] * b[k * 70 + j];
        const double want = 0.5 * p * (1 + std::erf(p / std::sqrt(2.0))) + r[i * 70 + j];
        ASSERT_NEAR(got[i * 70 + j], want, 1e-4 * (1 + std::abs(want))) << i << ", " << j;
      }
    }
  }
}

TEST(Providers, ARowEpilogueOverTheRowIsTakenByEveryProviderOnEveryTarget) {
  // The row-wise epilogues: softmax and layernorm over the output's row index after the
  // element-wise epilogue, written `softmax(j, ...)` (or out by hand) and `layernorm(j, ...)`;
  // fused into the CSR SpMM's store, after the linear layers' kernels; whatever no provider takes
  // runs as generated code, against float64.
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::map<std::string, std::string> csrA{{"A", "csr"}}, nmW{{"W", "2:4"}},
      csrW{{"W", "csr"}};
  std::vector<Case> cases;
  for (const std::string act : {"", "relu", "gelu"}) {
    for (const std::string bias : {"", " + b(j)", " + r(i)"}) {
      const std::string inner = "A(i,k) * B(k,j)" + bias;
      const std::string arg = act.empty() ? inner : act + "(" + inner + ")";
      cases.push_back({"C(i,j) = softmax(j, " + arg + ")", csrA, "csr_spmm"});
      cases.push_back({"C(i,j) = softmax(j, " + arg + ")", csrA, "csr_spmm", DType::kF64});
    }
  }
  for (const std::string bias : {"", " + b(j)", " + r(i)"}) {
    cases.push_back({"C(i,j) = layernorm(j, A(i,k) * B(k,j)" + bias + ")", csrA, "csr_spmm"});
    cases.push_back({"C(i,j) = layernorm(j, silu(A(i,k) * B(k,j)" + bias + "))", csrA, "csr_spmm",
                     DType::kF64});
  }
  cases.push_back({"Y(n,o) = layernorm(o, X(n,i) * W(o,i) + b(o))", nmW, "nm_linear"});
  cases.push_back(
      {"Y(n,o) = softmax(o, relu(X(n,i) * W(o,i) + b(o)))", nmW, "nm_linear", DType::kF64});
  cases.push_back({"y(o) = layernorm(o, W(o,i) * x(i))", csrW, "csr_spmm"});
  cases.push_back({"Y(n,o) = layernorm(o, relu(X(n,i) * W(o,i)))", {}, "dense_linear"});
  cases.push_back(
      {"Y(n,o) = layernorm(o, relu(X(n,i) * W(o,i)))", {}, "dense_linear", DType::kF64});
  cases.push_back({"C(i,j) += layernorm(j, A(i,k) * B(k,j))", csrA, "generated"});
  cases.push_back({"C(i,j) = layernorm(i, A(i,k) * B(k,j))", csrA, "generated"});
  cases.push_back(
      {"C(i,j) = exp(A(i,k) * B(k,j) - max(l, A(i,m) * B(m,l))) / "
       "sum(n, exp(A(i,p) * B(p,n) - max(q, A(i,t) * B(t,q))))",
       csrA, "csr_spmm"});
  cases.push_back({"Y(n,o) = softmax(o, X(n,i) * W(o,i) + b(o))", csrW, "csr_spmm"});
  cases.push_back({"y(o) = softmax(o, silu(W(o,i) * x(i)))", csrW, "csr_spmm"});
  cases.push_back({"Y(n,o) = softmax(o, X(n,i) * W(o,i) + b(o))", nmW, "nm_linear"});
  cases.push_back({"y(o) = softmax(o, relu(W(o,i) * x(i) + b(o)))", nmW, "nm_linear"});
  cases.push_back({"Y(n,o) = softmax(o, gelu(X(n,i) * W(o,i)))", {}, "dense_linear"});
  cases.push_back({"C(i,j) = softmax(j, A(i,k) * B(k,j))", {}, "dense_linear"});
  cases.push_back({"C(i,j) = softmax(j, A(i,k) * B(k,j) + b(j))", {}, "dense_linear", DType::kF64});
  // Over the rows' index, with +=, around a function no provider fuses: generated code.
  cases.push_back({"C(i,j) = softmax(i, A(i,k) * B(k,j))", csrA, "generated"});
  cases.push_back({"C(i,j) += softmax(j, A(i,k) * B(k,j))", csrA, "generated"});
  cases.push_back({"C(i,j) = softmax(j, exp(A(i,k) * B(k,j)))", csrA, "generated"});
  cases.push_back({"Y(n,o) = softmax(n, X(n,i) * W(o,i))", nmW, "generated"});
  const std::vector<int64_t> targets = targetsToRun();
  for (size_t t = 0; t < targets.size(); ++t) {
    hwy::SetSupportedTargetsForTest(targets[t]);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(targets[t]));
    // Under the sanitizers (10x slower; the written-out forms are large) every third case once,
    // alternating between the best and the baseline target (cases 0, 6, 12... on one, 3, 9...
    // on the other); the release build runs every case on every target.
    const size_t first = kSanitized ? 3 * (t % 2) : 0, stride = kSanitized ? 6 : 1;
    for (size_t n = first; n < cases.size(); n += stride) checkCase(cases[n], rng);
    // One column, and rows wider than a register panel (the softmax after the last one).
    for (int64_t j : kSanitized ? std::vector<int64_t>{129} : std::vector<int64_t>{1, 129, 300}) {
      checkCase({"C(i,j) = softmax(j, relu(A(i,k) * B(k,j) + b(j)))", csrA, "csr_spmm"}, rng,
                {{"j", j}, {"i", 50}, {"k", 60}});
      checkCase({"C(i,j) = layernorm(j, A(i,k) * B(k,j) + b(j))", csrA, "csr_spmm"}, rng,
                {{"j", j}, {"i", 50}, {"k", 60}});
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(Providers, BsrSpmmTakesEveryBlockShapeEpilogueAndSpellingOnEveryTarget) {
  // A in bsr:RxC (extents drawn at random, so edge blocks are padded), every epilogue, the bias per
  // row, the linear layout, a softmax, +=, f64; block heights without a register tile run as
  // generated code and say why.
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<Case> cases;
  const std::vector<std::string> shapes =
      kSanitized ? std::vector<std::string>{"bsr:4x4", "bsr:1x3"}
                 : std::vector<std::string>{"bsr:1x1", "bsr:2x2",  "bsr:4x4",
                                            "bsr:8x1", "bsr:16x2", "bsr:4x3"};
  for (const std::string& shape : shapes) {
    const std::map<std::string, std::string> a{{"A", shape}}, w{{"W", shape}};
    for (const std::string& k : withEpilogues("C(i,j)", "A(i,k) * B(k,j)", "b(j)"))
      cases.push_back({k, a, "bsr_spmm"});
    cases.push_back({"C(i,j) = silu(r(i) + B(k,j) * A(i,k))", a, "bsr_spmm"});
    cases.push_back({"y(i) = A(i,j) * x(j)", a, "bsr_spmm"});
    cases.push_back({"Y(n,o) = gelu(X(n,i) * W(o,i) + b(o))", w, "bsr_spmm"});
    cases.push_back({"C(i,j) = softmax(j, relu(A(i,k) * B(k,j) + b(j)))", a, "bsr_spmm"});
    cases.push_back({"C(i,j) = layernorm(j, A(i,k) * B(k,j) + b(j))", a, "bsr_spmm"});
    cases.push_back({"C(i,j) += relu(A(i,k) * B(k,j) + b(j))", a, "bsr_spmm"});
    cases.push_back({"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", a, "bsr_spmm", DType::kF64});
  }
  cases.push_back({"C(i,j) = A(i,k) * B(k,j)", {{"A", "bsr:3x3"}}, "generated"});
  for (int64_t target : targetsToRun()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target));
    for (const Case& c : cases) checkCase(c, rng);
    // Columns around the panel widths (every panel width, the scalar tail), f32 and f64.
    for (int64_t j :
         kSanitized ? std::vector<int64_t>{1, 37} : std::vector<int64_t>{1, 7, 16, 37, 64, 129}) {
      for (const DType dtype : {DType::kF32, DType::kF64}) {
        checkCase({"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {{"A", "bsr:4x2"}}, "bsr_spmm", dtype},
                  rng, {{"j", j}, {"i", 61}, {"k", 45}});
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  KernelOptions options;
  options.formats = {{"A", "bsr:3x3"}};
  const Kernel k = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  EXPECT_NE(k.describe().find("declined: bsr_spmm (A has 3-row blocks; the BSR kernel has tiles "
                              "for 1, 2, 4, 8 and 16"),
            std::string::npos)
      << k.describe();
}

TEST(Providers, WideAndNarrowShapesAndBatchOne) {
  std::mt19937 rng(freshSeed());
  // Columns around the CSR panel widths, a batch of one through the linear layouts.
  const std::vector<int64_t> widths = kSanitized ? std::vector<int64_t>{1, 17, 64}
                                                 : std::vector<int64_t>{1, 2, 15, 16, 17, 64, 129};
  for (int64_t j : widths) {
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      checkCase({"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {{"A", "csr"}}, "csr_spmm", dtype}, rng,
                {{"j", j}, {"i", kSanitized ? 120 : 300}, {"k", 200}});
    }
  }
  for (int64_t n : {1, 3, 64}) {
    checkCase({"Y(n,o) = X(n,i) * W(o,i) + b(o)", {{"W", "2:4"}}, "nm_linear"}, rng,
              {{"n", n}, {"o", 96}, {"i", 128}});
    checkCase({"Y(n,o) = gelu(X(n,i) * W(o,i))", {{"W", "csr"}}, "csr_spmm"}, rng,
              {{"n", n}, {"o", 96}, {"i", 128}});
  }
  // The csr linear layer over several tiles of X's rows (64 on AVX-512) with a ragged last one,
  // and output blocks split across threads: f32 and f64, = and +=.
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    checkCase({"Y(n,o) = silu(X(n,i) * W(o,i) + b(o))", {{"W", "csr"}}, "csr_spmm", dtype}, rng,
              {{"n", kSanitized ? 70 : 203}, {"o", kSanitized ? 40 : 300}, {"i", 150}});
    checkCase({"Y(n,o) += relu(X(n,i) * W(o,i) + b(o))", {{"W", "csr"}}, "csr_spmm", dtype}, rng,
              {{"n", 130}, {"o", 77}, {"i", 64}});
  }
}

TEST(Providers, WhatNoHandTunedProviderTakesRunsAsGeneratedCodeAndSaysWhy) {
  std::mt19937 rng(freshSeed());
  // A schedule, or hand-tuned kernels switched off: generated code, and describe() says why.
  KernelOptions scheduled;
  scheduled.schedule = "split(i, i0, i1, 8); parallel(i0)";
  checkCase({"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", {{"A", "csr"}}, "generated"}, rng, {},
            scheduled);
  KernelOptions off;
  off.handTuned = false;
  checkCase({"y(o) = W(o,i) * x(i)", {{"W", "2:4"}}, "generated"}, rng, {}, off);
  // Not a contraction with a fusable epilogue, or a layout no provider has.
  checkCase({"C(i,j) = exp(A(i,k) * B(k,j))", {}, "generated"}, rng);
  checkCase({"C(i,j) = A(i,k) * B(k,j) * A(i,k)", {{"A", "csr"}}, "generated"}, rng);
  checkCase({"C(i,j) = abs(A(i,k) * B(k,j)) * 2", {{"A", "csr"}}, "generated"}, rng);
  checkCase({"C(j,i) = A(i,k) * B(k,j)", {{"A", "csr"}}, "generated"}, rng);
  checkCase({"C(i,j) = A(i,k) * B(k,j)", {{"A", "csc"}}, "generated"}, rng);
  // Mixed dtypes (the CSR SpMM runs f32 or f64 throughout).
  KernelOptions mixed;
  mixed.formats = {{"A", "csr"}};
  mixed.dtypes = {{"A", DType::kF64}, {"B", DType::kF32}};
  const Kernel f64 = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", mixed);
  EXPECT_EQ(f64.provider(), "generated");
  EXPECT_NE(f64.describe().find("declined: csr_spmm (A is f64; the kernel is f32"),
            std::string::npos)
      << f64.describe();
}

/// a and b equal: the same NaN places, the same infinities, finite values within `tolerance`.
void expectSameValues(const std::vector<double>& a, const std::vector<double>& b,
                      double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t e = 0; e < a.size(); ++e) {
    if (std::isnan(b[e]) || std::isinf(b[e])) {
      ASSERT_TRUE(std::isnan(b[e]) ? std::isnan(a[e]) : a[e] == b[e])
          << "element " << e << ": " << a[e] << " vs " << b[e];
    } else {
      ASSERT_NEAR(a[e], b[e], tolerance * (1 + std::abs(b[e]))) << "element " << e;
    }
  }
}

TEST(Providers, ANonFiniteScaleWrittenInsideTheSumRunsGeneratedCode) {
  // `alpha * A(i,k) * B(k,j)` sums alpha's products: with alpha = ±inf or NaN that is not alpha
  // times the sum a provider computes (a row of A with no entries: 0, not inf · 0; products of
  // both signs: NaN, not ±inf). Those calls run generated code; finite ones the provider. Written
  // outside the sum, the provider's alpha · sum is the kernel's meaning for every alpha (checked
  // against alpha times the sum).
  std::mt19937 rng(freshSeed());
  const std::vector<double> a = randomValues({29, 20}, "csr", rng),  // rows 3, 10, ... empty
      b = randomValues({20, 12}, "dense", rng), w = randomValues({12, 20}, "2:4", rng);
  const Tensor tA = fromDense({29, 20}, a.data(), Format::parse("csr", 2));
  const Tensor dA = fromDense({29, 20}, a.data(), Format::parse("dense", 2));
  const Tensor tB = fromDense({20, 12}, b.data(), Format::parse("dense", 2));
  const Tensor tW = fromDense({12, 20}, w.data(), Format::parse("2:4", 2));
  struct Spelling {
    std::string text;
    std::string format;  ///< of A (or W)
    std::string provider;
    bool guarded;
  };
  const std::vector<Spelling> spellings = {
      {"C(i,j) = alpha * A(i,k) * B(k,j)", "csr", "csr_spmm", true},
      {"C(i,j) = relu(sum(k, A(i,k) * alpha * B(k,j)) + b(j))", "csr", "csr_spmm", true},
      {"C(i,j) = alpha * A(i,k) * B(k,j)", "dense", "dense_linear", true},
      {"Y(n,o) = alpha * W(o,i) * X(n,i)", "2:4", "nm_linear", true},
      {"C(i,j) = alpha * sum(k, A(i,k) * B(k,j))", "csr", "csr_spmm", false},
  };
  std::vector<double> bias(12);
  for (double& e : bias) e = std::uniform_real_distribution<double>(-1, 1)(rng);
  const Tensor tb = fromDense({12}, bias.data(), Format::parse("dense", 1));
  const std::vector<double> x = randomValues({29, 20}, "dense", rng);
  const Tensor tX = fromDense({29, 20}, x.data(), Format::parse("dense", 2));
  for (const Spelling& s : spellings) {
    SCOPED_TRACE(s.text);
    const bool linear = s.format == "2:4";
    KernelOptions options;
    options.formats = {{linear ? "W" : "A", s.format}};
    const Kernel fast = Kernel::compile(s.text, options);
    options.handTuned = false;
    const Kernel generated = Kernel::compile(s.text, options);
    ASSERT_EQ(fast.provider(), s.provider) << fast.describe();
    EXPECT_EQ(fast.describe().find("a non-finite 'alpha' runs generated code") != std::string::npos,
              s.guarded)
        << fast.describe();
    std::map<std::string, const Tensor*> inputs;
    if (linear) {
      inputs = {{"W", &tW}, {"X", &tX}};
    } else {
      inputs = {{"A", s.format == "csr" ? &tA : &dA}, {"B", &tB}};
      if (s.text.find("b(j)") != std::string::npos) inputs["b"] = &tb;
    }
    for (double alpha : {2.5, HUGE_VAL, -HUGE_VAL, std::nan("")}) {
      SCOPED_TRACE("alpha " + std::to_string(alpha));
      std::vector<double> want = toDense(generated.run(inputs, {{"alpha", alpha}}));
      const std::vector<double> sum = toDense(fast.run(inputs, {{"alpha", 1.0}}));
      if (!s.guarded && !std::isfinite(alpha)) {
        // alpha times the sum, as written (generated code moves the scalar into the sum: noted
        // in docs/kernels.md as its known difference).
        for (size_t e = 0; e < want.size(); ++e) want[e] = alpha * sum[e];
      }
      expectSameValues(toDense(fast.run(inputs, {{"alpha", alpha}})), want, 1e-5);
      Tensor into = generated.run(inputs, {{"alpha", 1.0}});
      fast.run(inputs, into, {{"alpha", alpha}});
      expectSameValues(toDense(into), want, 1e-5);
      // Generated code is compiled on the first non-finite call only (alpha 2.5 comes first).
      EXPECT_EQ(fast.describe().find("compiled for an earlier call") != std::string::npos,
                s.guarded && !std::isfinite(alpha))
          << fast.describe();
      // The inputs tell the two meanings apart where they differ: csr A has empty rows (0 against
      // NaN for any non-finite alpha), dense A products of both signs (NaN against ±inf).
      const bool tellsApart = s.guarded && s.text == "C(i,j) = alpha * A(i,k) * B(k,j)" &&
                              (s.format == "csr" ? !std::isfinite(alpha) : std::isinf(alpha));
      if (tellsApart) {
        bool differs = false;
        for (size_t e = 0; e < want.size(); ++e) {
          const double outside = alpha * sum[e];
          differs = differs || std::isnan(want[e]) != std::isnan(outside);
        }
        EXPECT_TRUE(differs) << "the inputs do not tell the two apart";
      }
    }
  }
}

TEST(Providers, ABiasChangedBetweenCallsIsReadOnEachCall) {
  // `y(o) = W(o,i) * x(i) + r(o)`: r is the layer's bias, given per call (the weights are packed
  // once per contents of W alone): written in place, or another tensor, each call adds the r it is
  // given; a GEMM's per-call bias the same.
  std::mt19937 rng(freshSeed());
  for (const std::string format : {"2:4", "dense"}) {
    for (const std::string text :
         {"y(o) = W(o,i) * x(i) + r(o)", "Y(n,o) = X(n,i) * W(o,i) + r(o)"}) {
      SCOPED_TRACE(format + ": " + text);
      const bool gemv = text[0] == 'y';
      KernelOptions options;
      options.formats = {{"W", format}};
      const Kernel kernel = Kernel::compile(text, options);
      ASSERT_EQ(kernel.provider(), format == "2:4" ? "nm_linear" : "dense_linear");
      const std::vector<double> w = randomValues({20, 24}, format, rng),
                                x = randomValues({gemv ? 24 : 6 * 24}, "dense", rng);
      const Tensor tW = fromDense({20, 24}, w.data(), Format::parse(format, 2));
      const std::vector<int64_t> xShape =
          gemv ? std::vector<int64_t>{24} : std::vector<int64_t>{6, 24};
      const Tensor tX =
          fromDense(xShape, x.data(), Format::parse("dense", static_cast<int32_t>(xShape.size())));
      std::vector<double> r = randomValues({20}, "dense", rng);
      Tensor tR = fromDense({20}, r.data(), Format::parse("dense", 1));
      std::vector<double> three(20, 3.0);
      const Tensor other = fromDense({20}, three.data(), Format::parse("dense", 1));
      const int64_t rows = gemv ? 1 : 6;
      for (int call = 0; call < 3; ++call) {
        SCOPED_TRACE("call " + std::to_string(call));
        if (call == 1) {  // r written in place
          float* values = tR.mutableValues().as<float>();
          for (int64_t o = 0; o < 20; ++o) {
            values[o] += 1.5f;
            r[static_cast<size_t>(o)] = values[o];
          }
        }
        const std::vector<double>& bias = call == 2 ? three : r;
        const std::vector<double> got = toDense(
            kernel.run({{"W", &tW}, {gemv ? "x" : "X", &tX}, {"r", call == 2 ? &other : &tR}}));
        for (int64_t n = 0; n < rows; ++n) {
          for (int64_t o = 0; o < 20; ++o) {
            double want = static_cast<float>(bias[static_cast<size_t>(o)]);
            for (int64_t k = 0; k < 24; ++k) {
              want += static_cast<float>(w[static_cast<size_t>(o * 24 + k)]) *
                      static_cast<double>(static_cast<float>(x[static_cast<size_t>(n * 24 + k)]));
            }
            ASSERT_NEAR(got[static_cast<size_t>(n * 20 + o)], want, 1e-4 * (1 + std::abs(want)))
                << "row " << n << " output " << o;
          }
        }
      }
      // W packed once for all three calls (the dense GEMV packs nothing: it reads W's rows).
      if (!(gemv && format == "dense")) {
        EXPECT_NE(kernel.describe().find("weights packed 1 time"), std::string::npos)
            << kernel.describe();
      }
    }
  }
}

TEST(Providers, AConvertedInputIsConvertedOncePerContents) {
  // B is given as f64 to a kernel compiled for f32: converted on the first call, reused while B
  // is unchanged, converted again after an in-place write.
  std::mt19937 rng(freshSeed());
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const Kernel kernel = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  ASSERT_EQ(kernel.provider(), "csr_spmm");
  std::vector<double> a = randomValues({40, 30}, "csr", rng),
                      b = randomValues({30, 8}, "dense", rng);
  const Tensor tA = fromDense({40, 30}, a.data(), Format::parse("csr", 2));
  Tensor tB = fromDense({30, 8}, b.data(), Format::parse("dense", 2), DType::kF64);
  const std::vector<double> first = toDense(kernel.run({{"A", &tA}, {"B", &tB}}));
  static_cast<double*>(tB.mutableValues().data())[0] += 1.0;
  b[0] += 1.0;
  const std::vector<double> second = toDense(kernel.run({{"A", &tA}, {"B", &tB}}));
  for (int64_t i = 0; i < 40; ++i) {
    double want = 0;
    for (int64_t k = 0; k < 30; ++k)
      want += a[static_cast<size_t>(i * 30 + k)] * b[static_cast<size_t>(k * 8)];
    EXPECT_NEAR(second[static_cast<size_t>(i * 8)], want, 1e-4) << "row " << i;
  }
  EXPECT_NE(first, second);
}

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

TEST(Providers, RepeatedCallsReuseAnOutputTheCallerLetGoOf) {
  // y = kernel.run(...) in a loop: the old y is alive while the new one is made, so two buffers
  // alternate; an output still held is never handed out again; values are right every time.
  std::mt19937 rng(freshSeed());
  for (const auto& [text, handTuned] : std::vector<std::pair<std::string, bool>>{
           {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", true},
           {"C(i,j) = relu(A(i,k) * B(k,j) + b(j))", false}}) {
    SCOPED_TRACE(text + (handTuned ? " (hand-tuned)" : " (generated)"));
    KernelOptions options;
    options.formats = {{"A", "csr"}};
    options.handTuned = handTuned;
    const Kernel kernel = Kernel::compile(text, options);
    const std::vector<double> a = randomValues({50, 30}, "csr", rng);
    const Tensor tA = fromDense({50, 30}, a.data(), Format::parse("csr", 2));
    std::vector<const void*> addresses;
    Tensor y;
    for (int call = 0; call < 6; ++call) {
      const std::vector<double> b = randomValues({30, 20}, "dense", rng);
      const std::vector<double> bias = randomValues({20}, "dense", rng);
      const Tensor tB = fromDense({30, 20}, b.data(), Format::parse("dense", 2));
      const Tensor tb = fromDense({20}, bias.data(), Format::parse("dense", 1));
      y = kernel.run({{"A", &tA}, {"B", &tB}, {"b", &tb}});
      addresses.push_back(y.values().data());
      const std::vector<double> got = toDense(y);
      for (int64_t i = 0; i < 50; ++i) {
        for (int64_t j = 0; j < 20; ++j) {
          double acc = bias[static_cast<size_t>(j)];
          for (int64_t k = 0; k < 30; ++k)
            acc += a[static_cast<size_t>(i * 30 + k)] * b[static_cast<size_t>(k * 20 + j)];
          ASSERT_NEAR(got[static_cast<size_t>(i * 20 + j)], std::max(acc, 0.0), 1e-4)
              << "call " << call << " element " << i << "," << j;
        }
      }
    }
    // Consecutive outputs differ (the previous one was still held), and from the third call on
    // the buffers alternate instead of being allocated anew.
    for (size_t c = 1; c < addresses.size(); ++c) EXPECT_NE(addresses[c], addresses[c - 1]);
    EXPECT_EQ(addresses[2], addresses[0]);
    EXPECT_EQ(addresses[5], addresses[3]);
    // Outputs the caller keeps are never reused: with both earlier ones held, new buffers.
    const Tensor kept = y;
    const std::vector<double> before = toDense(kept);
    const std::vector<double> b = randomValues({30, 20}, "dense", rng);
    const Tensor tB = fromDense({30, 20}, b.data(), Format::parse("dense", 2));
    const Tensor tb = fromDense({20}, b.data(), Format::parse("dense", 1));
    const Tensor second = kernel.run({{"A", &tA}, {"B", &tB}, {"b", &tb}});
    const Tensor third = kernel.run({{"A", &tA}, {"B", &tB}, {"b", &tb}});
    EXPECT_NE(second.values().data(), kept.values().data());
    EXPECT_NE(third.values().data(), kept.values().data());
    EXPECT_NE(third.values().data(), second.values().data());
    EXPECT_EQ(toDense(kept), before);
  }
}

}  // namespace
}  // namespace sparseflow

namespace sparseflow {
namespace {

TEST(Providers, CsrSpmmReadsAMisalignedBThroughAnAlignedCopy) {
  // B viewed in caller memory at a 4-byte offset (rows straddle cache lines), each row of B read
  // by many entries of A: the provider copies B aligned; the result is the same.
  std::mt19937 rng(freshSeed());
  const int64_t rows = 3200, inner = 24, cols = 64;  // 3200 entries per row of B
  const std::vector<double> a = randomValues({rows, inner}, "dense", rng);  // every entry stored
  const Tensor tA = fromDense({rows, inner}, a.data(), Format::parse("csr", 2));
  std::vector<float> storage(static_cast<size_t>(inner * cols + 16));
  float* b = storage.data() + 1;
  while (reinterpret_cast<uintptr_t>(b) % 64 == 0) ++b;  // never 64-byte aligned
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t e = 0; e < inner * cols; ++e) b[e] = u(rng);
  const Tensor tB({inner, cols}, DType::kF32, Format::parse("dense", 2),
                  std::vector<LevelStorage>(2), Buffer::view(DType::kF32, b, inner * cols));
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  const Kernel kernel = Kernel::compile("C(i,j) = A(i,k) * B(k,j)", options);
  ASSERT_EQ(kernel.provider(), "csr_spmm");
  const std::vector<double> got = toDense(kernel.run({{"A", &tA}, {"B", &tB}}));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      double want = 0;
      for (int64_t k = 0; k < inner; ++k)
        want += static_cast<double>(static_cast<float>(a[static_cast<size_t>(i * inner + k)])) *
                b[k * cols + j];
      ASSERT_NEAR(got[static_cast<size_t>(i * cols + j)], want, 1e-4) << i << "," << j;
    }
  }
}

TEST(Providers, F64CsrSpmmReadsBAtEveryOffsetOnEveryTarget) {
  // B in caller memory 0-7 doubles past a 64-byte boundary, read by few entries (no aligned
  // copy): the f64 kernel's shifted-row path (rows straddling lines), with bias and relu in
  // registers, against float64.
  std::mt19937 rng(freshSeed());
  const int64_t rows = 70, inner = 40, cols = 32;
  const std::vector<double> a = randomValues({rows, inner}, "csr", rng);
  const Tensor tA = fromDense({rows, inner}, a.data(), Format::parse("csr", 2), DType::kF64);
  const std::vector<double> bias = randomValues({cols}, "dense", rng);
  const Tensor tBias = fromDense({cols}, bias.data(), Format::parse("dense", 1), DType::kF64);
  KernelOptions options;
  options.formats = {{"A", "csr"}};
  options.dtypes = {{"A", DType::kF64}, {"B", DType::kF64}, {"b", DType::kF64}, {"C", DType::kF64}};
  const Kernel kernel = Kernel::compile("C(i,j) = relu(A(i,k) * B(k,j) + b(j))", options);
  ASSERT_EQ(kernel.provider(), "csr_spmm") << kernel.describe();
  std::vector<double> storage(static_cast<size_t>(inner * cols + 16));
  double* base = storage.data();
  while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t target : targetsToRun()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(std::string("target ") + hwy::TargetName(target));
    for (int64_t offset = 0; offset < 8; ++offset) {
      SCOPED_TRACE("offset " + std::to_string(offset));
      double* b = base + offset;
      for (int64_t e = 0; e < inner * cols; ++e) b[e] = u(rng);
      const Tensor tB({inner, cols}, DType::kF64, Format::parse("dense", 2),
                      std::vector<LevelStorage>(2), Buffer::view(DType::kF64, b, inner * cols));
      const std::vector<double> got = toDense(kernel.run({{"A", &tA}, {"B", &tB}, {"b", &tBias}}));
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          double want = bias[static_cast<size_t>(j)];
          for (int64_t k = 0; k < inner; ++k)
            want += a[static_cast<size_t>(i * inner + k)] * b[k * cols + j];
          want = want < 0 ? 0 : want;
          ASSERT_NEAR(got[static_cast<size_t>(i * cols + j)], want, 1e-12 * (1 + std::abs(want)))
              << i << "," << j;
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace sparseflow
