// libFuzzer target: any schedule text parses or gives a parse error; what parses prints back to
// the same text; applied to the loop IR of SpMM (csr) and of SDDMM (with the default schedule's
// passes after it) it gives a scheduled IR or a sparseflow::Error, never a crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "lower/lower.h"
#include "schedule/schedule.h"
#include "sparseflow/error.h"

namespace {

using namespace sparseflow;

/// The loop IR of `text` with A (and M) bound as csr, lowered once.
ir::Stmt lowered(const std::string& text) {
  const expr::Statement s = expr::parse(text);
  std::map<std::string, expr::TensorInfo> infos;
  for (const char* name : {"A", "B", "M", "X", "Z"}) infos[name] = {{3, 3}, DType::kF32};
  std::map<std::string, expr::TensorInfo> used;
  for (const auto& [name, info] : infos) {
    if (text.find(std::string(name) + "(") != std::string::npos) used[name] = info;
  }
  lower::LowerOptions options;
  options.formats = {{"A", Format::parse("csr", 2)}, {"M", Format::parse("csr", 2)}};
  return lower::lowerKernel(expr::check(s, used), options).body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ir::Stmt spmm = lowered("C(i,j) = A(i,k) * B(k,j)");
  static const ir::Stmt sddmm = lowered("Y(i,j) = M(i,j) * sum(k, X(i,k) * Z(j,k))");
  // SpMM's output is dense (precompute may take it); SDDMM's shares M's pattern.
  static const std::vector<schedule::DenseOutput> spmmOutput = {
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
  for (const ir::Stmt& body : {spmm, sddmm}) {
    try {
      const ir::Stmt scheduled = schedule::applySchedule(
          body, s, body == spmm ? spmmOutput : std::vector<schedule::DenseOutput>{});
      (void)ir::toString(scheduled);
      // The default schedule's C++-only passes run after the user's.
      (void)ir::toString(schedule::specializeExtents(schedule::splitAccumulators(scheduled)));
    } catch (const Error&) {
      // A refused schedule: fine, as long as it is an Error.
    }
  }
  return 0;
}
