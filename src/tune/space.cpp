// Enumerating the autoconfigurator's space (space.h): candidate formats per tuned operand times
// schedule variants built from each format's own loop labels, kept when they compile.
#include "tune/space.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "expr/expr.h"
#include "lower/normalize.h"
#include "pipeline/contraction.h"
#include "pipeline/pipeline.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/nm.h"
#include "support/check.h"

namespace sparseflow::tune {

std::string Config::arguments() const {
  std::string out;
  for (const auto& [name, format] : formats)
    out += (out.empty() ? "" : " ") + ("--format " + name + "=" + format);
  if (!schedule.empty()) out += " --schedule '" + schedule + "'";
  if (!handTuned) out += " --generated-only";
  if (!parallel) out += " --serial";
  return out;
}

namespace {

/// True when no row's group of `m` consecutive columns holds more than `n` nonzeros (NaN counts),
/// read from the stored entries: O(entries log entries) memory and time, never the dense matrix
/// (a 46,500-square arrow matrix is 8.6 GB dense).
bool holdsAtMost(const Tensor& matrix, int n, int m) {
  const Coo coo = toCoo(matrix);
  const int64_t groups = (matrix.shape()[1] + m - 1) / m;
  std::vector<int64_t> keys;
  keys.reserve(coo.values.size());
  for (size_t e = 0; e < coo.values.size(); ++e) {
    if (coo.values[e] != 0.0)
      keys.push_back(coo.coords[2 * e] * groups + coo.coords[2 * e + 1] / m);
  }
  std::sort(keys.begin(), keys.end());
  for (size_t e = 0; e < keys.size();) {
    size_t end = e;
    while (end < keys.size() && keys[end] == keys[e]) ++end;
    if (static_cast<int64_t>(end - e) > n) return false;
    e = end;
  }
  return true;
}

}  // namespace

std::vector<std::string> candidateFormats(const Tensor& tensor) {
  std::vector<std::string> out = {"csr", "csc",   "dcsr",  "coo",   "ell",
                                  "hyb", "hyb:4", "hyb:8", "hyb:16"};
  for (int r : {1, 2, 4, 8, 16}) {
    for (int c : {1, 2, 4, 8, 16})
      out.push_back("bsr:" + std::to_string(r) + "x" + std::to_string(c));
  }
  // n:m stores n of every m along the rows: a candidate only where nothing would be dropped.
  if (tensor.rank() == 2) {
    for (const auto& [n, m] : {std::pair{2, 4}, std::pair{1, 4}}) {
      if (tensor.shape()[1] % m == 0 && holdsAtMost(tensor, n, m))
        out.push_back(std::to_string(n) + ":" + std::to_string(m));
    }
  }
  return out;
}

std::vector<Config> scheduleVariants(const std::string& outer, const std::string& inner) {
  std::vector<Config> out;
  out.push_back(Config{});                     // the default, hand-tuned providers allowed
  out.push_back(Config{{}, "", false, 0, 0});  // the default, generated code
  const std::vector<int64_t> splits = {4, 8, 16, 32, 64, 128, 256};
  const std::vector<int64_t> unrolls = {2, 4, 8};
  auto split = [&](int64_t s) {
    return "split(" + outer + ", " + outer + "0, " + outer + "1, " + std::to_string(s) +
           "); parallel(" + outer + "0)";
  };
  auto unroll = [&](int64_t u) { return "unroll(" + inner + ", " + std::to_string(u) + ")"; };
  for (int64_t s : splits) out.push_back(Config{{}, split(s), false, s, 0});
  if (inner != outer) {
    for (int64_t u : unrolls) out.push_back(Config{{}, unroll(u), false, 0, u});
    for (int64_t s : splits) {
      for (int64_t u : unrolls) out.push_back(Config{{}, split(s) + "; " + unroll(u), false, s, u});
    }
  }
  return out;
}

namespace {

/// The first nest's outermost and innermost loop labels for these formats ("i", "j"; a blocked
/// format's "i_blk"), from the lowered kernel's loop order.
bool loopLabels(const std::string& kernel, const KernelOptions& options, std::string* outer,
                std::string* inner) {
  KernelOptions stop = options;
  stop.stopAfter = "lower";
  stop.schedule = Schedule();
  const pipeline::CompiledKernel k = pipeline::compile(kernel, stop);
  // A decomposed kernel (a hyb operand) runs one kernel per part; its parts share the loops.
  const lower::LoweredKernel& lowered = k.parts.empty() ? k.lowered : k.parts.front()->lowered;
  if (lowered.loopOrders.empty()) return false;
  const std::string& order = lowered.loopOrders.front();  // "i, k, j"
  *outer = order.substr(0, order.find(','));
  const size_t last = order.rfind(", ");
  *inner = last == std::string::npos ? *outer : order.substr(last + 2);
  return true;
}

}  // namespace

void requireLegalConfiguration(const SpaceRequest& request, const Space& space) {
  SF_USER_CHECK(!space.configs.empty())
      << "the kernel '" << request.kernel << "' has no legal configuration to search"
      << (space.why.empty() ? std::string() : "; the first refused: " + space.why.front());
}

Space enumerateSpace(const SpaceRequest& request) {
  Space space;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> choices;
  for (const auto& [name, tensor] : request.tuned) {
    SF_USER_CHECK(tensor != nullptr && tensor->rank() == 2)
        << "tuned operand '" << name << "' must be a 2-d tensor";
    names.push_back(name);
    choices.push_back(candidateFormats(*tensor));
  }
  // The default first: the formats as given (csr for a tuned operand given none), no schedule.
  std::map<std::string, std::string> given;
  for (const auto& [name, format] : request.base.formats) given[name] = format;
  for (const std::string& name : names) given.emplace(name, "csr");
  std::set<std::string> seen;
  const std::string output = expr::parse(request.kernel).lhs.tensor;
  std::function<void(Config, bool)> tryConfig = [&](Config c, bool retry) {
    space.considered += retry ? 0 : 1;
    const std::string key = c.arguments();
    if (!seen.insert(key).second) return;
    KernelOptions options = request.base;
    options.formats.clear();
    for (const auto& [name, format] : c.formats) options.formats[name] = format;
    options.schedule = Schedule::parse(c.schedule);
    options.handTuned = c.handTuned;
    options.parallel = c.parallel;
    options.stopAfter = "schedule";  // legality: lowering and the schedule (the rest always runs)
    try {
      pipeline::compile(request.kernel, options);
    } catch (const Error& e) {
      // A parallel loop whose iterations add into the same outputs (a csc or coo operand's
      // outer loop) runs on per-thread copies of the output instead: precompute.
      const size_t parallel = c.schedule.find("parallel(");
      const std::string text = e.what();
      if (parallel != std::string::npos && text.find("would race") != std::string::npos) {
        const size_t close = c.schedule.find(')', parallel);
        const std::string loop = c.schedule.substr(parallel + 9, close - parallel - 9);
        Config privatized = c;
        privatized.schedule.insert(parallel, "precompute(" + output + ", " + loop + "); ");
        tryConfig(std::move(privatized), true);
        return;
      }
      if (space.why.size() < 8) space.why.push_back(key + ": " + text);
      return;
    }
    space.configs.push_back(std::move(c));
  };
  // Each configuration, and (when the user's options allow threads) its one-thread twin: a
  // schedule's parallel() forks regardless, so only those without one have a twin.
  const auto tryBoth = [&](Config c) {
    c.parallel = request.base.parallel;
    const bool twin = c.parallel && c.schedule.find("parallel(") == std::string::npos;
    tryConfig(c, false);
    if (!twin) return;
    c.parallel = false;
    tryConfig(std::move(c), false);
  };
  Config first;
  first.formats = given;
  tryBoth(first);
  // Every combination of candidate formats (one tuned operand in practice: SpMM, SpMV, SDDMM).
  std::vector<size_t> pick(names.size(), 0);
  while (true) {
    std::map<std::string, std::string> formats = given;
    for (size_t n = 0; n < names.size(); ++n) formats[names[n]] = choices[n][pick[n]];
    KernelOptions options = request.base;
    options.formats.clear();
    for (const auto& [name, format] : formats) options.formats[name] = format;
    std::string outer, inner;
    bool labelled = false;
    try {
      labelled = loopLabels(request.kernel, options, &outer, &inner);
    } catch (const Error& e) {
      if (space.why.size() < 8) space.why.push_back(e.what());
    }
    if (labelled) {
      for (Config c : scheduleVariants(outer, inner)) {
        c.formats = formats;
        tryBoth(std::move(c));
      }
    }
    size_t n = 0;
    while (n < names.size() && ++pick[n] == choices[n].size()) pick[n++] = 0;
    if (n == names.size()) break;
  }
  return space;
}

Features kernelFeatures(const std::string& kernel,
                        const std::map<std::string, const Tensor*>& inputs) {
  const expr::Statement statement = expr::parse(kernel);
  std::map<std::string, expr::TensorInfo> infos;
  for (const auto& [name, tensor] : inputs) infos[name] = {tensor->shape(), tensor->dtype()};
  const expr::CheckedKernel checked = expr::check(statement, infos);
  Features f;
  f.add("out_rank", static_cast<double>(statement.lhs.indices.size()));
  f.add("inputs", static_cast<double>(checked.inputs.size()));
  f.add("reduced_indices", static_cast<double>(checked.reductionIndices.size()));
  f.add("f64", checked.computeType == DType::kF64);
  f.add("accumulate", statement.accumulate);
  // The dense work per stored entry: the extents of the indices no 2-d input of the kernel uses
  // (SpMM's columns; 1 for SpMV).
  std::set<std::string> sparseIndices;
  for (const auto& [name, tensor] : inputs) {
    if (tensor->format().isDenseRowMajor()) continue;
    for (const expr::Access* a : lower::allAccesses(*statement.rhs)) {
      if (a->tensor == name) sparseIndices.insert(a->indices.begin(), a->indices.end());
    }
  }
  double dense = 1;
  for (const auto& [index, extent] : checked.indexExtents) {
    if (!sparseIndices.count(index)) dense *= static_cast<double>(extent);
  }
  f.add("dense_extent_log2", std::log2(dense));
  std::string why;
  std::map<std::string, Format> formats;
  for (const auto& [name, tensor] : inputs) formats[name] = tensor->format();
  const auto contraction = pipeline::recognizeContraction(checked, formats, &why);
  f.add("contraction", contraction.has_value());
  f.add("epilogue",
        contraction && (contraction->bias || contraction->activation != Activation::kNone));
  return f;
}

std::vector<TunedOperand> modelOperands(const std::string& kernel,
                                        const std::vector<std::string>& tuned) {
  const expr::Statement statement = expr::parse(kernel);
  std::vector<std::string> appearance;
  for (const expr::Access* a : lower::allAccesses(*statement.rhs)) {
    if (std::find(appearance.begin(), appearance.end(), a->tensor) == appearance.end())
      appearance.push_back(a->tensor);
  }
  std::vector<std::string> ordered = tuned;
  const auto position = [&](const std::string& name) {
    return std::find(appearance.begin(), appearance.end(), name) - appearance.begin();
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const std::string& a, const std::string& b) {
    return position(a) < position(b);
  });
  std::vector<TunedOperand> operands;
  for (size_t k = 0; k < ordered.size(); ++k)
    operands.push_back({ordered[k], k < 26 ? std::string(1, static_cast<char>('A' + k))
                                           : "T" + std::to_string(k)});
  return operands;
}

Features fixedFeatures(const std::string& kernel, const std::vector<TunedOperand>& operands,
                       const std::map<std::string, const Tensor*>& inputs) {
  Features fixed;
  for (const TunedOperand& operand : operands)
    fixed.append(matrixFeatures(*inputs.at(operand.name)), operand.role + ".");
  fixed.append(kernelFeatures(kernel, inputs), "kernel.");
  fixed.append(machineFeatures(), "machine.");
  return fixed;
}

Features configFeatures(const Config& config, const std::vector<TunedOperand>& operands) {
  Features f;
  static const char* const kFamilies[] = {"csr", "csc", "dcsr", "coo", "bsr", "ell", "hyb", "nm"};
  for (const auto& [name, role] : operands) {
    const auto it = config.formats.find(name);
    const std::string format = it == config.formats.end() ? "csr" : it->second;
    const std::string family = format.rfind("bsr", 0) == 0                                 ? "bsr"
                               : format.rfind("hyb", 0) == 0                               ? "hyb"
                               : format.find(':') != std::string::npos && format[0] != 'e' ? "nm"
                                                                                           : format;
    for (const char* k : kFamilies) f.add(role + ".is_" + k, family == k);
    double blockRows = 0, blockCols = 0, width = 0;
    if (family == "bsr") {
      const size_t x = format.find('x');
      blockRows = std::log2(std::stod(format.substr(4, x - 4)));
      blockCols = std::log2(std::stod(format.substr(x + 1)));
    } else if (family == "hyb" && format.size() > 4) {
      width = std::log2(std::stod(format.substr(4)));
    }
    f.add(role + ".block_rows_log2", blockRows);
    f.add(role + ".block_cols_log2", blockCols);
    f.add(role + ".hyb_width_log2", width);
  }
  f.add("split_log2", config.split > 0 ? std::log2(static_cast<double>(config.split)) : 0.0);
  f.add("unroll_log2", config.unroll > 0 ? std::log2(static_cast<double>(config.unroll)) : 0.0);
  f.add("hand_tuned", config.handTuned);
  f.add("serial", !config.parallel);
  return f;
}

}  // namespace sparseflow::tune
