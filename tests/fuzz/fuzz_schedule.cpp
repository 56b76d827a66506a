// libFuzzer target: any schedule text parses or gives a parse error; what parses prints back to
// the same text; applied to the loop IR of SpMM (csr), of SDDMM and of the two-nest fused epilogue
// kernel (with the default schedule's passes after it) it gives a scheduled IR whose scopes are
// well formed (every name declared once where it is visible: ir/verify.h) and whose printed text
// reads back as the same IR (ir/parser.h, ir/equal.h), or a user error (kInvalidArgument,
// kNotSupported), never an internal error or a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "ir/equal.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "sparseflow/error.h"

namespace {

using namespace sparseflow;

/// The loop IR of `text` with A (and M) bound as csr, lowered once.
lower::LoweredKernel lowered(const std::string& text) {
  const expr::Statement s = expr::parse(text);
  std::map<std::string, expr::TensorInfo> infos;
  for (const char* name : {"A", "B", "M", "X", "Z"}) infos[name] = {{3, 3}, DType::kF32};
  infos["b"] = {{3}, DType::kF32};
  std::map<std::string, expr::TensorInfo> used;
  for (const auto& [name, info] : infos) {
    if (text.find(std::string(name) + "(") != std::string::npos) used[name] = info;
  }
  lower::LowerOptions options;
  options.formats = {{"A", Format::parse("csr", 2)}, {"M", Format::parse("csr", 2)}};
  return lower::lowerKernel(expr::check(s, used), options);
}

/// What the text of `k`'s body may use undeclared: its arrays and extents.
ir::ParseEnvironment environment(const lower::LoweredKernel& k) {
  ir::ParseEnvironment env;
  env.arrays["sf_params"] = ir::ScalarType::kF64;
  for (const std::string& index : k.indexVars)
    env.scalars[lower::extentName(index)] = ir::ScalarType::kI64;
  for (const lower::ArrayBinding& a : k.arrays) env.arrays[a.array.name] = a.array.element;
  return env;
}

/// What the entry point declares for `k`'s body: extents, arrays, parameters.
std::set<std::string> external(const lower::LoweredKernel& k) {
  std::set<std::string> names{"sf_params"};
  for (const std::string& index : k.indexVars) names.insert(lower::extentName(index));
  for (const lower::ArrayBinding& a : k.arrays) names.insert(a.array.name);
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const lower::LoweredKernel spmm = lowered("C(i,j) = A(i,k) * B(k,j)");
  static const lower::LoweredKernel sddmm = lowered("Y(i,j) = M(i,j) * sum(k, X(i,k) * Z(j,k))");
  static const lower::LoweredKernel epilogue =
      lowered("C(i,j) = relu(sum(k, A(i,k) * B(k,j)) + b(j))");
  // SpMM's and the epilogue kernel's output is dense (precompute may take it); SDDMM's shares M's
  // pattern.
  static const std::vector<schedule::DenseOutput> denseC = {
      {"C",
       {"tC_vals", ir::ScalarType::kF32},
       ir::mul(ir::var("n_i", ir::ScalarType::kI64), ir::var("n_j", ir::ScalarType::kI64))}};
  const std::string text(reinterpret_cast<const char*>(data), size);
  schedule::Schedule s;
  try {
    s = schedule::Schedule::parse(text);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kParseError && e.code() != ErrorCode::kInvalidArgument)
      __builtin_trap();
    return 0;
  }
  const std::string printed = s.toString();
  if (schedule::Schedule::parse(printed).toString() != printed) __builtin_trap();
  for (const lower::LoweredKernel* kernel : {&spmm, &sddmm, &epilogue}) {
    try {
      const ir::Stmt scheduled = schedule::applySchedule(
          kernel->body, s, kernel == &sddmm ? std::vector<schedule::DenseOutput>{} : denseC);
      (void)ir::toString(scheduled);
      // The default schedule's C++-only passes run after the user's.
      const ir::Stmt versioned =
          schedule::specializeExtents(schedule::splitAccumulators(scheduled));
      (void)ir::toString(versioned);
      if (!ir::verifyScopes(versioned, external(*kernel)).empty()) __builtin_trap();
      // Printed, the IR reads back as itself (a parse error here is a printer or parser bug).
      for (const ir::Stmt& stage : {scheduled, versioned}) {
        ir::Stmt back;
        try {
          back = ir::parseStmt(ir::toString(stage), environment(*kernel));
        } catch (...) {
          __builtin_trap();
        }
        if (!ir::equal(back, stage)) __builtin_trap();
      }
    } catch (const Error& e) {
      // A refused schedule: fine, as long as it is a user error.
      if (e.code() != ErrorCode::kInvalidArgument && e.code() != ErrorCode::kNotSupported)
        __builtin_trap();
    }
  }
  return 0;
}
