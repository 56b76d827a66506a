// convert(): the direct paths where one exists, else the general path through coordinates.
#include "sparseflow/convert.h"

#include <chrono>
#include <cstdio>

#include "convert/compressed_transpose.h"
#include "convert/direct_paths.h"
#include "format/value_cast.h"
#include "sparseflow/build.h"
#include "support/check.h"

namespace sparseflow {
namespace {

/// A direct path: nullopt when the formats are not its pair or the general path must decide.
struct DirectPath {
  std::optional<Tensor> (*run)(const Tensor&, const Format&);
  const char* label;  ///< what the report says ran
};

constexpr DirectPath kDirectPaths[] = {
    {conversion::convertCompressed, "direct"},
    {conversion::csrToRowLists, "direct"},
    {conversion::csrToBsr, "direct"},
    {conversion::bsrToCsr, "direct"},
    {conversion::csrToEll, "direct"},
    {conversion::ellToCsr, "direct"},
    {conversion::csrToHyb, "direct"},
    {conversion::hybToCsr, "direct"},
    {conversion::denseToNM, "direct, nm::compress"},
    {conversion::nmToDense, "direct, nm::decompress"},
};

}  // namespace

std::string ConversionReport::toString() const {
  char line[512];
  int n = std::snprintf(
      line, sizeof line, "%s: %lld stored -> %lld stored, %lld -> %lld bytes, %.3f ms",
      path.c_str(), static_cast<long long>(storedBefore), static_cast<long long>(storedAfter),
      static_cast<long long>(bytesBefore), static_cast<long long>(bytesAfter), seconds * 1e3);
  if (dtypeBefore != dtypeAfter && n > 0 && static_cast<size_t>(n) < sizeof line) {
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n),
                  "; %s -> %s: %lld values rounded (%lld overflowed), max abs error %.4g, max "
                  "rel error %.4g",
                  dtypeName(dtypeBefore), dtypeName(dtypeAfter),
                  static_cast<long long>(valuesRounded), static_cast<long long>(valuesOverflowed),
                  maxAbsError, maxRelError);
  }
  return line;
}

namespace {

/// The conversion at the source's value type: a copy, a direct path or the general path.
Tensor convertSameType(const Tensor& tensor, const Format& format, bool forceGeneral,
                       std::string& path) {
  if (!forceGeneral) {
    if (format == tensor.format()) {
      path = "copy";
      return tensor.clone();
    }
    for (const DirectPath& direct : kDirectPaths) {
      if (std::optional<Tensor> result = direct.run(tensor, format)) {
        path = direct.label;
        return std::move(*result);
      }
    }
  }
  path = "general, through coordinates";
  BuildOptions build;
  build.dtype = tensor.dtype();
  return fromCoo(toCoo(tensor), format, build);
}

}  // namespace

Tensor convert(const Tensor& tensor, const Format& format, const ConvertOptions& options,
               ConversionReport* report) {
  SF_USER_CHECK(format.rank() == tensor.rank())
      << "cannot convert a rank-" << tensor.rank() << " tensor to " << format.toString()
      << ", a rank-" << format.rank() << " format";
  const auto start = std::chrono::steady_clock::now();
  const DType dtype = options.changeDType ? options.dtype : tensor.dtype();
  SF_USER_CHECK(isFloatType(dtype)) << "cannot convert values to " << dtypeName(dtype)
                                    << "; tensor values are f32, f64, f16 or bf16";
  std::string path;
  CastReport castReport;
  CastReport* cast = report ? &castReport : nullptr;  // counting rounding costs a second look
  Tensor result;
  if (dtype == tensor.dtype()) {
    result = convertSameType(tensor, format, options.forceGeneral, path);
  } else if (format == tensor.format() && !options.forceGeneral) {
    path = "cast";
    result = castTensor(tensor, dtype, cast);
  } else if (dtypeSize(dtype) < dtypeSize(tensor.dtype())) {
    // Narrowing: cast first, so the format conversion moves the smaller values.
    result = convertSameType(castTensor(tensor, dtype, cast), format, options.forceGeneral, path);
    path = "cast, then " + path;
  } else {
    result = castTensor(convertSameType(tensor, format, options.forceGeneral, path), dtype, cast);
    path += ", then cast";
  }
  if (report) {
    report->from = tensor.format().toString();
    report->to = result.format().toString();
    report->path = report->from + " -> " + report->to + " (" + path + ")";
    report->storedBefore = tensor.numStored();
    report->storedAfter = result.numStored();
    report->bytesBefore = tensor.storageBytes();
    report->bytesAfter = result.storageBytes();
    report->dtypeBefore = tensor.dtype();
    report->dtypeAfter = dtype;
    report->valuesRounded = castReport.rounded;
    report->valuesOverflowed = castReport.overflowed;
    report->maxAbsError = castReport.maxAbsError;
    report->maxRelError = castReport.maxRelError;
    report->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

Tensor convertOwned(Tensor&& tensor, const Format& format) {
  if (std::optional<Tensor> reused = conversion::csrToRowListsReusing(tensor, format)) {
    tensor = Tensor();  // the source's arrays now belong to the result alone
    return std::move(*reused);
  }
  return convert(tensor, format);
}

Tensor convert(const Tensor& tensor, const std::string& format, ConversionReport* report) {
  return convert(tensor, Format::parse(format, tensor.rank()), {}, report);
}

Tensor permuteDims(const Tensor& tensor, const std::vector<int32_t>& perm, const Format& format) {
  const int32_t rank = tensor.rank();
  SF_USER_CHECK(static_cast<int32_t>(perm.size()) == rank)
      << "permutation has " << perm.size() << " entries for a rank-" << rank << " tensor";
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int32_t p : perm) {
    SF_USER_CHECK(p >= 0 && p < rank && !seen[static_cast<size_t>(p)])
        << "invalid permutation entry " << p;
    seen[static_cast<size_t>(p)] = true;
  }
  Coo coo = toCoo(tensor);
  Coo out;
  for (int32_t d = 0; d < rank; ++d) out.shape.push_back(coo.shape[static_cast<size_t>(perm[d])]);
  out.values = std::move(coo.values);
  out.coords.resize(coo.coords.size());
  for (int64_t e = 0; e < out.numEntries(); ++e) {
    for (int32_t d = 0; d < rank; ++d) {
      out.coords[static_cast<size_t>(e * rank + d)] =
          coo.coords[static_cast<size_t>(e * rank + perm[d])];
    }
  }
  BuildOptions build;
  build.dtype = tensor.dtype();
  return fromCoo(out, format, build);
}

Tensor transpose(const Tensor& tensor, const Format& format) {
  SF_USER_CHECK(tensor.rank() == 2)
      << "transpose needs a matrix; use permuteDims for rank " << tensor.rank();
  return permuteDims(tensor, {1, 0}, format);
}

}  // namespace sparseflow
