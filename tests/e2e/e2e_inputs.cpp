// Inputs and comparisons for end-to-end kernel tests (see e2e_inputs.h).
#include "e2e/e2e_inputs.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>

#include "sparseflow/build.h"

namespace sparseflow::testing {
namespace {

void collectIndices(const expr::Expr& e, std::map<std::string, std::vector<std::string>>& out) {
  if (const auto* a = std::get_if<expr::Access>(&e.node)) {
    out[a->tensor] = a->indices;
  } else if (const auto* u = std::get_if<expr::Unary>(&e.node)) {
    collectIndices(*u->operand, out);
  } else if (const auto* b = std::get_if<expr::Binary>(&e.node)) {
    collectIndices(*b->lhs, out);
    collectIndices(*b->rhs, out);
  } else if (const auto* r = std::get_if<expr::Reduce>(&e.node)) {
    collectIndices(*r->body, out);
  }
}

std::string formatOf(const std::map<std::string, std::string>& formats, const std::string& name) {
  auto it = formats.find(name);
  return it != formats.end() ? it->second : "dense";
}

DType dtypeOf(const std::map<std::string, DType>& dtypes, const std::string& name) {
  auto it = dtypes.find(name);
  return it != dtypes.end() ? it->second : DType::kF32;
}

}  // namespace

std::map<std::string, const Tensor*> KernelInputs::pointers() const {
  std::map<std::string, const Tensor*> out;
  for (const auto& [name, t] : tensors) out[name] = &t;
  return out;
}

std::map<std::string, std::vector<std::string>> inputIndices(const std::string& text) {
  std::map<std::string, std::vector<std::string>> out;
  collectIndices(*expr::parse(text).rhs, out);
  return out;
}

bool isNMFormat(const std::string& format) {
  const auto colon = format.find(':');
  return colon != std::string::npos && colon > 0 &&
         std::isdigit(static_cast<unsigned char>(format[0]));
}

KernelInputs randomInputs(const std::string& text,
                          const std::map<std::string, std::string>& formats,
                          const std::map<std::string, int64_t>& extents, double density,
                          const std::map<std::string, DType>& dtypes, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::map<std::string, DenseRef> values;
  for (const auto& [name, idx] : inputIndices(text)) {
    DenseRef ref;
    for (const std::string& i : idx) ref.shape.push_back(extents.at(i));
    int64_t size = 1;
    for (int64_t d : ref.shape) size *= d;
    const std::string format = formatOf(formats, name);
    const bool sparse = format != "dense";
    ref.values.resize(static_cast<size_t>(size));
    for (double& v : ref.values) v = (!sparse || unit(rng) < density) ? value(rng) : 0.0;
    if (isNMFormat(format)) {  // keep the first n of every m along the last dimension
      const auto colon = format.find(':');
      const int64_t n = std::stoll(format.substr(0, colon));
      const int64_t m = std::stoll(format.substr(colon + 1));
      const int64_t cols = ref.shape.back();
      for (int64_t row = 0; row < size; row += cols) {
        for (int64_t g = 0; g < cols; g += m) {
          int64_t kept = 0;
          for (int64_t k = row + g; k < row + std::min(cols, g + m); ++k) {
            if (ref.values[static_cast<size_t>(k)] != 0 && ++kept > n)
              ref.values[static_cast<size_t>(k)] = 0;
          }
        }
      }
    }
    values[name] = std::move(ref);
  }
  return inputsFromValues(values, formats, dtypes);
}

KernelInputs inputsFromValues(const std::map<std::string, DenseRef>& values,
                              const std::map<std::string, std::string>& formats,
                              const std::map<std::string, DType>& dtypes) {
  KernelInputs in;
  for (const auto& [name, given] : values) {
    DenseRef ref = given;
    const DType dtype = dtypeOf(dtypes, name);
    if (dtype == DType::kF32) {
      for (double& v : ref.values) v = static_cast<float>(v);
    }
    const Format format =
        Format::parse(formatOf(formats, name), static_cast<int32_t>(ref.shape.size()));
    in.tensors.emplace(name, fromDense(ref.shape, ref.values.data(), format, dtype));
    in.infos[name] = {ref.shape, dtype};
    in.dense[name] = std::move(ref);
  }
  return in;
}

std::vector<double> referenceOf(const std::string& text, const KernelInputs& in,
                                const std::map<std::string, double>& params,
                                const ReferenceOptions& options) {
  const expr::CheckedKernel checked = expr::check(expr::parse(text), in.infos);
  return referenceEval(checked, in.dense, params, {}, options);
}

std::vector<double> roundedToF32(std::vector<double> values) {
  for (double& v : values) v = static_cast<float>(v);
  return values;
}

int64_t countMismatches(const std::vector<double>& got, const std::vector<double>& expected,
                        double tolerance, bool relative) {
  EXPECT_EQ(got.size(), expected.size());
  int64_t bad = 0;
  for (size_t k = 0; k < std::min(got.size(), expected.size()); ++k) {
    const double g = got[k], e = expected[k];
    bool same;
    if (std::isnan(e) || std::isnan(g)) {
      same = std::isnan(e) && std::isnan(g);
    } else if (std::isinf(e) || std::isinf(g)) {
      same = g == e;
    } else {
      same = std::fabs(g - e) <= tolerance * (relative ? std::max(1.0, std::fabs(e)) : 1.0);
    }
    if (!same && ++bad <= 5) ADD_FAILURE() << "element " << k << ": got " << g << ", want " << e;
  }
  return bad;
}

}  // namespace sparseflow::testing
