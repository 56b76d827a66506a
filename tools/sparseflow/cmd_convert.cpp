// `sparseflow convert IN --to FORMAT -o OUT` (also `sparseflow-convert`): one tensor file, a
// directory of weight files or a whole .safetensors checkpoint to any format, 2:4 included, with
// the impact report of every tensor; written atomically to a file, a directory or a checkpoint.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "sparseflow/build.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/commands.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"
#include "sparseflow/kernel.h"
#include "sparseflow/nm.h"
#include "sparseflow/process.h"
#include "sparseflow/progress.h"
#include "sparseflow/statistics.h"
#include "sparseflow/text_table.h"
#include "sparseflow/tune.h"
#include "sparseflow/validate.h"
#include "sparseflow/weights.h"

namespace sparseflow::tools {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct ConvertArgs {
  std::string input, output, format;
  WeightOptions weights;
  bool json = false;
  int64_t batch = 32;    ///< --to best: the columns of the activations the layer multiplies
  std::string database;  ///< --to best: the tuning database ("" default, "-" none)
  int budget = 16;       ///< --to best: configurations timed besides the format as read
};

enum class OutputKind { kFile, kCheckpoint, kDirectory };

/// What a conversion did to the values, measured against the source at full precision.
struct ValueReport {
  double maxAbsError = 0, meanAbsError = 0, relativeError = 0, keptMagnitude = 1;
  int64_t kept = 0, total = 0;
  int64_t changed = 0;  ///< positions whose value differs from the source's (-1: not counted)
  int64_t rounded = 0;  ///< values the output's value type holds only approximately
  std::string firstChange;
};

/// What happened to one tensor of the input.
struct TensorReport {
  std::string name, origin, dtype;
  std::vector<int64_t> shape;
  std::string action;  // converted, copied, skipped
  std::string reason;  // why copied or skipped
  std::string from, to, path;
  std::string dtypeAfter;
  int64_t bytesBefore = 0, bytesAfter = 0;
  ValueReport values;
  double seconds = 0;
  /// --to best: the tuned SpMM's time per call with the chosen format, the format as read and
  /// dense; the schedule that goes with the chosen format; whether the database knew it.
  double tunedMs = -1, asReadMs = -1, denseMs = -1;
  std::string tunedSchedule;
  bool fromDatabase = false;
};

OutputKind outputKind(const std::string& output) {
  std::error_code ec;
  if (output.ends_with('/') || fs::is_directory(output, ec)) return OutputKind::kDirectory;
  const FileKind kind = fileKindFromPath(output);
  if (kind == FileKind::kSafetensors) return OutputKind::kCheckpoint;
  if (kind != FileKind::kAuto) return OutputKind::kFile;
  if (!fs::path(output).has_extension()) return OutputKind::kDirectory;
  throw Error(ErrorCode::kInvalidArgument,
              output +
                  ": cannot tell the output kind from the extension (use .safetensors, .sft, "
                  ".mtx, .npy, .tns, .smtx, or a directory)");
}

/// "N:M": digits, a colon, digits (and nothing else).
bool isNMText(const std::string& format) {
  const size_t colon = format.find(':');
  const auto digits = [](std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return colon != std::string::npos && digits(std::string_view(format).substr(0, colon)) &&
         digits(std::string_view(format).substr(colon + 1));
}

void requireMatrix(const Tensor& t, const char* target) {
  if (t.rank() != 2) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string("--to ") + target +
                    " chooses among matrix formats; the tensor has rank " +
                    std::to_string(t.rank()) + " (name a format)");
  }
}

/// The smallest exact format of a matrix among dense, csr, bsr:4x4, ell and (when the matrix fits
/// as is) 2:4; "smallest" in --to. Sizes are predicted from the matrix's statistics (one pass over
/// the entries), so no candidate larger than the best so far is ever built.
std::string smallestFormat(const Tensor& t) {
  requireMatrix(t, "smallest");
  const MatrixStatistics s = matrixStatistics(t);
  const double value = static_cast<double>(dtypeSize(t.dtype()));
  const double index = s.nnz > INT32_MAX || s.rows > INT32_MAX || s.cols > INT32_MAX ? 8 : 4;
  const auto rows = static_cast<double>(s.rows), cols = static_cast<double>(s.cols);
  const double blocks4 = static_cast<double>(s.blockFill.size() > 1 ? s.blockFill[1].blocks : 0);
  const std::vector<std::pair<std::string, double>> candidates = {
      {"dense", rows * cols * value},
      {"csr", (rows + 1) * index + static_cast<double>(s.nnz) * (index + value)},
      {"bsr:4x4", (std::ceil(rows / 4) + 1) * index + blocks4 * (index + 16 * value)},
      {"ell", rows * static_cast<double>(s.maxRow) * (index + value)},
      {"2:4", s.fitsTwoFour && s.cols % 4 == 0 ? rows * cols / 2 * value + rows * cols / 8
                                               : std::numeric_limits<double>::infinity()}};
  std::string best;
  double bestBytes = std::numeric_limits<double>::infinity();
  for (const auto& [format, bytes] : candidates) {
    if (bytes < bestBytes) best = format, bestBytes = bytes;
  }
  return best;
}

/// The fastest exact format of a weight matrix W for the layer's product W X with `batch` columns
/// of X ("best" in --to): the autoconfigurator's search (docs/tune.md: the shipped cost model
/// ranks the formats and schedules, the best few are timed, the decision is recorded in the tuning
/// database) plus dense, timed beside it. Fills the report's times.
std::string fastestFormat(const Tensor& w, const ConvertArgs& args, TensorReport& r) {
  requireMatrix(w, "best");
  // The times are of f32 compute on the pattern; X's values do not matter (fixed, not zero).
  ConvertOptions f32;
  f32.changeDType = true;
  f32.dtype = DType::kF32;
  const Tensor a = w.format().isDenseRowMajor()
                       ? convert(w, Format::parse("csr", 2), f32)
                       : (w.dtype() == DType::kF32 ? w : convert(w, w.format(), f32));
  std::vector<double> xValues(static_cast<size_t>(w.shape()[1] * args.batch));
  for (size_t k = 0; k < xValues.size(); ++k) xValues[k] = 0.25 * static_cast<double>(k % 7) - 0.5;
  const Tensor x =
      fromDense({w.shape()[1], args.batch}, xValues.data(), Format::parse("dense", 2), DType::kF32);
  const std::string kernel = "C(i,j) = A(i,k) * B(k,j)";
  const std::map<std::string, const Tensor*> inputs{{"A", &a}, {"B", &x}};
  TuneOptions t;
  t.database = args.database;
  t.tuned = {"A"};
  t.budget = args.budget;
  const TuneResult tuned = tuneKernel(kernel, inputs, {}, t);
  r.tunedMs = tuned.medianMs;
  r.asReadMs = tuned.defaultMs;
  r.tunedSchedule = tuned.schedule;
  r.fromDatabase = tuned.fromDatabase;
  // Dense: the dense GEMM provider on a dense copy (when one fits the storage limit).
  try {
    KernelOptions dense;
    dense.formats = {{"A", "dense"}};
    const Tensor denseA = convert(a, Format::parse("dense", 2));
    const std::map<std::string, const Tensor*> denseInputs{{"A", &denseA}, {"B", &x}};
    const Kernel k = Kernel::compile(kernel, dense);
    std::vector<double> times;
    Tensor out = k.run(denseInputs);
    for (int n = 0; n < 5; ++n) {
      const auto start = std::chrono::steady_clock::now();
      k.run(denseInputs, out);
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(times.begin(), times.end());
    r.denseMs = times[times.size() / 2];
  } catch (const Error&) {
    r.denseMs = -1;  // too large to hold dense: not a candidate
  }
  if (r.denseMs >= 0 && r.denseMs < r.tunedMs) {
    r.tunedSchedule.clear();
    return "dense";
  }
  return tuned.formats.at("A");
}

ValueReport fromImpact(const nm::Impact& i) {
  ValueReport v;
  v.maxAbsError = i.maxAbsError;
  v.meanAbsError = i.meanAbsError;
  v.relativeError = i.relativeFrobeniusError;
  v.keptMagnitude = i.keptMagnitudeFraction;
  v.kept = i.kept;
  v.total = i.total;
  v.changed = -1;
  return v;
}

ValueReport fromComparison(const ValueComparison& c) {
  ValueReport v;
  v.maxAbsError = c.maxAbsError;
  v.meanAbsError = c.meanAbsError;
  v.relativeError = c.relativeFrobeniusError;
  v.keptMagnitude = c.keptMagnitudeFraction;
  v.kept = c.kept;
  v.total = c.total;
  v.changed = c.changed;
  v.firstChange = c.firstChange;
  return v;
}

/// Converts (or prunes, for N:M) one tensor, in `dtype` when set, and fills its report: every
/// exact conversion is checked against the source's values at full precision, entry by entry.
Tensor convertOne(const Tensor& in, const std::string& target, const ConvertArgs& args,
                  TensorReport& r) {
  const std::optional<DType> dtype = args.weights.dtype;
  const auto start = std::chrono::steady_clock::now();
  r.from = in.format().toString();
  r.bytesBefore = in.storageBytes();
  ConvertOptions options;
  options.changeDType = dtype.has_value();
  options.dtype = dtype.value_or(in.dtype());
  ConversionReport conversion;
  Tensor out;
  if (isNMText(target)) {
    nm::Sparsified s = nm::sparsify(in, nm::NMPattern::parse(target));
    out = options.dtype == s.compressed.dtype()
              ? std::move(s.compressed)
              : convert(s.compressed, s.compressed.format(), options, &conversion);
    r.values = fromImpact(s.impact);
  } else {
    const std::string format = target == "smallest" ? smallestFormat(in)
                               : target == "best"   ? fastestFormat(in, args, r)
                                                    : target;
    out = convert(in, Format::parse(format, in.rank()), options, &conversion);
    r.values = fromComparison(compareValues(in, out));
  }
  r.values.rounded = conversion.valuesRounded;
  validate(out);
  r.to = out.format().toString();
  r.dtypeAfter = dtypeName(out.dtype());
  r.bytesAfter = out.storageBytes();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

Json valuesJson(const ValueReport& v) {
  Json j = {{"max_error", v.maxAbsError},
            {"mean_error", v.meanAbsError},
            {"relative_error", v.relativeError},
            {"kept_magnitude", v.keptMagnitude},
            {"kept", v.kept},
            {"total", v.total},
            {"rounded", v.rounded}};
  if (v.changed >= 0) j["changed"] = v.changed;
  if (!v.firstChange.empty()) j["first_change"] = v.firstChange;
  return j;
}

Json reportJson(const ConvertArgs& args, const std::vector<TensorReport>& reports) {
  Json tensors = Json::array();
  for (const TensorReport& r : reports) {
    Json t = {{"name", r.name}, {"shape", r.shape}, {"dtype", r.dtype}, {"action", r.action}};
    if (!r.reason.empty()) t["reason"] = r.reason;
    if (r.action == "converted") {
      t["from"] = r.from;
      t["to"] = r.to;
      t["dtype_after"] = r.dtypeAfter;
      t["bytes_before"] = r.bytesBefore;
      t["bytes_after"] = r.bytesAfter;
      t["impact"] = valuesJson(r.values);
      t["seconds"] = r.seconds;
      if (r.tunedMs >= 0) {
        Json tuned = {{"ms", std::min(r.tunedMs, r.denseMs >= 0 ? r.denseMs : r.tunedMs)},
                      {"as_read_ms", r.asReadMs},
                      {"schedule", r.tunedSchedule},
                      {"from_database", r.fromDatabase},
                      {"batch", args.batch}};
        if (r.denseMs >= 0) tuned["dense_ms"] = r.denseMs;
        t["tuned"] = tuned;
      }
    }
    if (!r.path.empty()) t["path"] = r.path;
    tensors.push_back(std::move(t));
  }
  return {
      {"input", args.input}, {"output", args.output}, {"to", args.format}, {"tensors", tensors}};
}

std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

void printText(const ConvertArgs& args, const std::vector<TensorReport>& reports) {
  TextTable table({"tensor", "shape", "from", "to", "dtype", "kept", "changed", "max err",
                   "mean err", "rel err", "kept mag", "bytes before", "after"});
  std::vector<const TensorReport*> others;
  int64_t before = 0, after = 0, converted = 0;
  std::vector<std::string> notes;
  for (const TensorReport& r : reports) {
    if (r.action != "converted") {
      others.push_back(&r);
      continue;
    }
    ++converted;
    before += r.bytesBefore;
    after += r.bytesAfter;
    const ValueReport& v = r.values;
    char kept[32];
    std::snprintf(kept, sizeof kept, "%.2f%%",
                  v.total ? 100.0 * static_cast<double>(v.kept) / static_cast<double>(v.total) : 0);
    const std::string dtype = r.dtype == r.dtypeAfter ? r.dtype : r.dtype + "->" + r.dtypeAfter;
    table.row({printableMessage(r.name), shapeText(r.shape), r.from, r.to, dtype, kept,
               v.changed < 0 ? "-" : std::to_string(v.changed), fixed(v.maxAbsError, 3),
               fixed(v.meanAbsError, 3), fixed(v.relativeError, 3), fixed(v.keptMagnitude, 4),
               bytesText(static_cast<double>(r.bytesBefore)),
               bytesText(static_cast<double>(r.bytesAfter))});
    if (r.tunedMs >= 0) {
      char times[160];
      std::snprintf(times, sizeof times, "%.4g ms (as read %.4g ms, dense %s)",
                    r.to == "dense" ? r.denseMs : r.tunedMs, r.asReadMs,
                    r.denseMs >= 0 ? (fixed(r.denseMs, 4) + " ms").c_str() : "too large");
      notes.push_back(printableMessage(r.name) + ": " + r.to + " is fastest for W X with " +
                      std::to_string(args.batch) + " columns: " + times +
                      (r.tunedSchedule.empty() ? "" : "; schedule '" + r.tunedSchedule + "'") +
                      (r.fromDatabase ? "; from the tuning database" : ""));
    }
    if (v.rounded > 0) {
      notes.push_back(printableMessage(r.name) + ": " + std::to_string(v.rounded) +
                      " values rounded to " + r.dtypeAfter + " (from " + r.dtype + ")" +
                      (v.firstChange.empty() ? "" : "; first change at " + v.firstChange));
    } else if (v.changed > 0) {
      notes.push_back(printableMessage(r.name) + ": " + std::to_string(v.changed) +
                      " values changed; first change at " + v.firstChange);
    }
  }
  std::printf("%s", table.str().c_str());
  std::printf("converted %lld of %zu tensors to %s: %s -> %s; wrote %s\n",
              static_cast<long long>(converted), reports.size(), args.format.c_str(),
              bytesText(static_cast<double>(before)).c_str(),
              bytesText(static_cast<double>(after)).c_str(), args.output.c_str());
  std::printf(
      "(kept: stored nonzeros of all elements; changed: entries whose value differs from the "
      "source's, compared in float64; errors are |source - converted|; rel err is the relative "
      "Frobenius error; kept mag is the fraction of sum |w| kept)\n");
  for (const std::string& note : notes) std::printf("%s\n", note.c_str());
  for (const TensorReport* r : others) {
    std::printf("%s %s (%s %s): %s\n", r->action.c_str(), printableMessage(r->name).c_str(),
                r->dtype.c_str(), shapeText(r->shape).c_str(), printableMessage(r->reason).c_str());
  }
}

/// A sibling of `output` to build a directory in before renaming it into place.
/// The output directory's path without a trailing slash.
fs::path directoryPath(const std::string& output) {
  fs::path out = fs::path(output).lexically_normal();
  return out.has_filename() ? out : out.parent_path();
}

/// A sibling of the output directory to build it in before renaming it into place.
fs::path tempSibling(const std::string& output) {
  const fs::path out = directoryPath(output);
  return out.parent_path() / (out.filename().string() + ".tmp." + std::to_string(::getpid()));
}

int runConvert(const ConvertArgs& args) {
  const OutputKind kind = outputKind(args.output);
  std::vector<std::string> ignored;
  std::vector<Weight> weights = listWeights(args.input, args.weights, &ignored);
  std::error_code ec;
  // One tensor in, one tensor out: any rank, no selection by shape (the classic `convert`).
  const bool single = !fs::is_directory(args.input, ec) && weights.size() == 1;
  fs::path tmpDir;
  std::optional<StagingPath> staging;  // removed by the CLI's signal handlers if interrupted
  if (kind == OutputKind::kDirectory) {
    fs::path out(args.output);
    if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
      const std::string special = specialFileKind(args.output);
      const std::string what = special.empty() ? ": exists and is not an empty directory"
                                               : ": is " + special + ", not a directory";
      throw Error(ErrorCode::kInvalidArgument, args.output + what + " (refusing to overwrite)");
    }
    tmpDir = tempSibling(args.output);
    staging.emplace(tmpDir.string(), true);  // before it exists: no moment it could be left
    fs::remove_all(tmpDir, ec);
    if (!fs::create_directory(tmpDir, ec)) {
      throw Error(ErrorCode::kIoError, tmpDir.string() + ": cannot create: " + ec.message());
    }
  }
  try {
    std::vector<TensorReport> reports;
    std::vector<std::string> convertedNames;
    Tensor fileTensor;
    CheckpointWriter writer;
    // A checkpoint's own metadata ("format": "pt"...) goes on to the converted one.
    if (kind == OutputKind::kCheckpoint && !fs::is_directory(args.input, ec) && !weights.empty() &&
        weights.front().checkpoint) {
      for (const auto& [key, value] : weights.front().checkpoint->metadata()) {
        writer.setMetadata(key, value);
      }
    }
    std::set<std::string> fileNames;
    Progress bar("convert", static_cast<int64_t>(weights.size()));
    for (Weight& w : weights) {
      bar.step(w.name);
      TensorReport r;
      r.name = w.name;
      r.origin = w.origin;
      Tensor loaded;
      if (!w.checkpoint) {  // files: shape and type are known once read
        loaded = w.loadSource();
        w.shape = loaded.shape();
        w.dtype = dtypeName(loaded.dtype());
      }
      r.shape = w.shape;
      r.dtype = w.dtype;
      std::string reason = skipReason(w, args.weights);
      if (single && w.readable && reason.rfind("not 2-d", 0) == 0) reason.clear();
      std::optional<Tensor> out;
      if (reason.empty()) {
        if (w.checkpoint) loaded = w.loadSource();
        try {
          out = convertOne(loaded, args.format, args, r);
        } catch (const Error& e) {
          throw Error(e.code(), w.origin + ": tensor '" + w.name + "': " + e.what());
        }
        r.action = "converted";
        convertedNames.push_back(w.name);
        if (kind == OutputKind::kFile) fileTensor = *out;  // the one tensor of the output file
      } else {
        r.action = kind == OutputKind::kFile ? "skipped" : "copied";
        r.reason = reason + (kind == OutputKind::kFile ? "; the output file holds one tensor" : "");
      }
      if (kind == OutputKind::kCheckpoint) {
        if (out) {
          writer.add(w.name, *out);
        } else if (w.checkpoint) {
          writer.copy(*w.checkpoint, w.name);
        } else {
          writer.add(w.name, loaded);
        }
      } else if (kind == OutputKind::kDirectory) {
        const std::string base = safeFileName(w.name);
        const bool raw = !out && !w.readable;
        const std::string file = base + (raw ? ".safetensors" : ".sft");
        if (!fileNames.insert(file).second) {
          throw Error(ErrorCode::kInvalidArgument,
                      "tensor '" + w.name + "' would be written to " + file +
                          ", which another tensor's name also becomes");
        }
        if (raw) {
          CheckpointWriter one;
          one.copy(*w.checkpoint, w.name);
          one.write((tmpDir / file).string());
        } else {
          if (!out && w.checkpoint) loaded = w.loadSource();
          write((tmpDir / file).string(), out ? *out : loaded);
        }
        r.path = (fs::path(args.output) / file).string();
      }
      reports.push_back(std::move(r));
    }
    bar.clear();
    if (kind == OutputKind::kFile) {
      if (convertedNames.size() != 1) {
        std::string names;
        for (const std::string& name : convertedNames) names += (names.empty() ? "" : ", ") + name;
        throw Error(ErrorCode::kInvalidArgument,
                    args.output + ": a " + fs::path(args.output).extension().string() +
                        " file holds one tensor but " + std::to_string(convertedNames.size()) +
                        " were converted" + (names.empty() ? "" : " (" + names + ")") +
                        "; write a .safetensors file or a directory, or choose with --include");
      }
      write(args.output, fileTensor);
    } else if (kind == OutputKind::kCheckpoint) {
      writer.write(args.output);
    } else {
      const fs::path out = directoryPath(args.output);
      if (fs::exists(out, ec)) fs::remove(out, ec);  // an empty directory, checked above
      fs::rename(tmpDir, out, ec);
      if (ec) throw Error(ErrorCode::kIoError, args.output + ": cannot create: " + ec.message());
    }
    if (args.json) {
      Json j = reportJson(args, reports);
      j["ignored"] = ignored;
      // Tensor names are bytes from the file: invalid UTF-8 is replaced, never a throw.
      std::printf("%s\n", j.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    } else {
      printText(args, reports);
      if (!ignored.empty()) {
        std::printf("ignored %zu file(s) that are not weights:", ignored.size());
        for (const std::string& f : ignored) std::printf(" %s", f.c_str());
        std::printf("\n");
      }
    }
    return 0;
  } catch (...) {
    if (!tmpDir.empty()) fs::remove_all(tmpDir, ec);
    throw;
  }
}

}  // namespace

void addConvertCommand(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a tensor file, a directory of weights or a .safetensors checkpoint to a format "
      "(2:4 prunes), printing what it cost");
  auto args = std::make_shared<ConvertArgs>();
  cmd->add_option("IN", args->input,
                  "a tensor file (.mtx, .npy, .smtx, .sft, .tns...), a directory of weight files "
                  "or a .safetensors checkpoint")
      ->required();
  cmd->add_option("--to", args->format,
                  "target format: dense, csr, csc, coo, dcsr, dcsc, bsr:RxC, ell[:K], hyb[:K], "
                  "N:M (2:4 prunes by magnitude), csf, dcsf, levels[...], @i64 for 64-bit indices, "
                  "smallest (the smallest exact one of dense, csr, bsr:4x4, ell and 2:4), or best "
                  "(the fastest exact one for the layer's product, by the autoconfigurator)")
      ->required();
  cmd->add_option("--batch", args->batch,
                  "--to best: columns of the activations each weight multiplies (default 32)");
  cmd->add_option("--budget", args->budget,
                  "--to best: configurations timed per tensor besides the format as read, at "
                  "most (default 16)");
  cmd->add_option("--db", args->database,
                  "--to best: the tuning database (default: $SPARSEFLOW_TUNE_DB, else "
                  "tuning.jsonl in the kernel cache; - for none)");
  cmd->add_option("-o,--output", args->output,
                  "a .safetensors checkpoint, a directory (one .sft per tensor), or one tensor "
                  "file: .sft, .mtx, .npy, .tns or .smtx")
      ->required();
  addWeightOptions(*cmd, args->weights);
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->footer(
      "Of a checkpoint or a directory, the 2-d float tensors that --include/--exclude select are "
      "converted; every other tensor is copied unchanged and listed with the reason. Outputs are "
      "written atomically (a temporary file or directory renamed into place).");
  cmd->callback([&action, args] { action = [args] { return runConvert(*args); }; });
}

}  // namespace sparseflow::tools
