// Matrix selection, CSR loading, dense operands and float64 references of the compiled-kernel
// benchmarks.
#include "common/compiler_inputs.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "sparseflow/io.h"

namespace sparseflow::bench {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// The size line of a coordinate Matrix Market file of real, integer or pattern values; for
/// anything else (array, complex, unreadable) why the benchmark leaves it out.
std::string readMtxHeader(const std::string& path, MatrixFile& file) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return "cannot read its first line";
  std::istringstream banner(lower(line));
  std::string tag, object, layout, field, symmetry;
  banner >> tag >> object >> layout >> field >> symmetry;
  if (tag != "%%matrixmarket" || object != "matrix") return "not a Matrix Market matrix header";
  if (layout != "coordinate") return "a dense '" + layout + "' file, not a sparse coordinate one";
  if (field != "real" && field != "integer" && field != "pattern" && field != "double") {
    return "'" + field + "' values (real, integer or pattern are benchmarked)";
  }
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '%') continue;
    std::istringstream size(line);
    if (!(size >> file.rows >> file.cols >> file.entries)) return "a malformed size line";
    if (symmetry != "general") file.entries *= 2;
    return file.rows > 0 && file.cols > 0 ? "" : "no rows or no columns";
  }
  return "no size line";
}

/// Line 1 of a DLMC file: "rows, cols, nnz".
std::string readSmtxHeader(const std::string& path, MatrixFile& file) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return "cannot read its first line";
  std::replace(line.begin(), line.end(), ',', ' ');
  std::istringstream size(line);
  if (!(size >> file.rows >> file.cols >> file.entries)) return "a malformed size line";
  return file.rows > 0 && file.cols > 0 ? "" : "no rows or no columns";
}

/// A native file holds its shape in a header the reader maps without copying the arrays.
std::string readSftHeader(const std::string& path, MatrixFile& file) {
  try {
    const Tensor t = read(path);
    if (t.rank() != 2) return "a rank-" + std::to_string(t.rank()) + " tensor, not a matrix";
    file.rows = t.shape()[0];
    file.cols = t.shape()[1];
    file.entries = t.numStored();
    return file.rows > 0 && file.cols > 0 ? "" : "no rows or no columns";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

std::vector<MatrixFile> listMatrixFiles(const std::string& dataDir,
                                        std::vector<std::pair<std::string, std::string>>* leftOut) {
  std::vector<MatrixFile> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dataDir)) {
    if (!entry.is_regular_file()) continue;
    MatrixFile file;
    file.path = entry.path().string();
    const std::string ext = lower(entry.path().extension().string());
    std::string why;
    if (ext == ".mtx") {
      why = readMtxHeader(file.path, file);
    } else if (ext == ".smtx") {
      why = readSmtxHeader(file.path, file);
    } else if (ext == ".sft") {
      why = readSftHeader(file.path, file);
    } else {
      continue;
    }
    if (why.empty() && file.entries <= 0) why = "no entries";
    if (why.empty()) {
      files.push_back(file);
    } else if (leftOut) {
      leftOut->emplace_back(file.path, why);
    }
  }
  std::sort(files.begin(), files.end(),
            [](const MatrixFile& a, const MatrixFile& b) { return a.path < b.path; });
  if (leftOut) std::sort(leftOut->begin(), leftOut->end());
  return files;
}

std::vector<MatrixFile> defaultSelection(const std::vector<MatrixFile>& files, int64_t largeEntries,
                                         int maxCount, int smallCount) {
  std::vector<MatrixFile> bySize = files;
  std::stable_sort(bySize.begin(), bySize.end(),
                   [](const MatrixFile& a, const MatrixFile& b) { return a.entries > b.entries; });
  std::vector<MatrixFile> chosen, small;
  std::set<std::tuple<int64_t, int64_t, int64_t>> smallShapes;
  const int largeMax = std::max(0, maxCount - smallCount);
  for (const MatrixFile& f : bySize) {
    if (f.entries >= largeEntries && static_cast<int>(chosen.size()) < largeMax) {
      chosen.push_back(f);
    } else if (f.entries < largeEntries && f.entries >= 1000 &&
               smallShapes.insert({f.rows, f.cols, f.entries}).second) {
      small.push_back(f);  // largest first; tiny matrices measure call overhead only
    }
  }
  // Evenly spaced ranks among the smaller matrices, from the largest down.
  const auto n = static_cast<int>(small.size());
  const int take = std::min(smallCount, n);
  for (int s = 0; s < take; ++s) {
    chosen.push_back(small[static_cast<size_t>(take > 1 ? s * (n - 1) / (take - 1) : 0)]);
  }
  return chosen;
}

std::vector<std::string> uniqueLabels(const std::vector<std::string>& paths) {
  std::vector<std::vector<std::string>> parts;  // stem, then parent folders outward
  for (const std::string& p : paths) {
    std::filesystem::path path(p);
    std::vector<std::string> names = {path.stem().string()};
    for (auto parent = path.parent_path(); !parent.empty() && parent != parent.parent_path();
         parent = parent.parent_path()) {
      names.push_back(parent.filename().string());
    }
    parts.push_back(names);
  }
  std::vector<size_t> depth(paths.size(), 1);
  std::vector<std::string> labels(paths.size());
  for (int round = 0; round < 16; ++round) {
    std::map<std::string, std::vector<size_t>> seen;
    for (size_t i = 0; i < paths.size(); ++i) {
      std::string label;
      for (size_t d = std::min(depth[i], parts[i].size()); d-- > 0;) {
        label += parts[i][d] + (d ? "-" : "");
      }
      labels[i] = label;
      seen[label].push_back(i);
    }
    bool clash = false;
    for (const auto& [label, users] : seen) {
      if (users.size() < 2) continue;
      for (size_t i : users) {
        if (depth[i] < parts[i].size()) {
          ++depth[i];
          clash = true;
        }
      }
    }
    if (!clash) break;
  }
  return labels;
}

double Matrix::bytes() const {
  return static_cast<double>(rows + 1) * 4 + nnz * 8.0;
}

double Matrix::spgemmFlops() const {
  double products = 0;
  for (int64_t e = 0; e < nnz; ++e) products += pos[crd[e] + 1] - pos[crd[e]];
  return 2 * products;
}

int64_t Matrix::spgemmEntries() const {
  std::vector<int64_t> mark(static_cast<size_t>(cols), -1);
  int64_t entries = 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = pos[i]; e < pos[i + 1]; ++e) {
      for (int64_t f = pos[crd[e]]; f < pos[crd[e] + 1]; ++f) {
        if (mark[static_cast<size_t>(crd[f])] != i) {
          mark[static_cast<size_t>(crd[f])] = i;
          ++entries;
        }
      }
    }
  }
  return entries;
}

Matrix loadMatrix(const std::string& path, const std::string& label) {
  ReadOptions options;
  options.format = "csr";
  options.dtype = DType::kF32;
  options.fill = ValueFill::kRandom;  // DLMC patterns
  options.seed = 20240601;
  Matrix m;
  m.path = path;
  m.label = label;
  m.csr = read(path, options);
  if (m.csr.level(1).pos.dtype() != DType::kI32 || m.csr.level(1).crd.dtype() != DType::kI32) {
    throw std::runtime_error(path + ": expected int32 CSR arrays");
  }
  m.rows = m.csr.shape()[0];
  m.cols = m.csr.shape()[1];
  m.nnz = m.csr.numStored();
  m.pos = m.csr.level(1).pos.as<int32_t>();
  m.crd = m.csr.level(1).crd.as<int32_t>();
  m.vals = m.csr.values().as<float>();
  return m;
}

Matrix syntheticMatrix(const std::string& spec) {
  std::vector<int64_t> numbers;
  std::string rest = spec;
  if (rest.rfind("banded:", 0) != 0) {
    throw std::runtime_error("--synthetic=" + spec + ": expected banded:ROWS:PER_ROW[:BAND]");
  }
  rest = rest.substr(7);
  for (size_t at = 0; at <= rest.size();) {
    const size_t end = std::min(rest.find(':', at), rest.size());
    try {
      numbers.push_back(std::stoll(rest.substr(at, end - at)));
    } catch (const std::exception&) {
      throw std::runtime_error("--synthetic=" + spec + ": '" + rest.substr(at, end - at) +
                               "' is not a number");
    }
    at = end + 1;
  }
  if (numbers.size() < 2 || numbers.size() > 3) {
    throw std::runtime_error("--synthetic=" + spec + ": expected banded:ROWS:PER_ROW[:BAND]");
  }
  const int64_t rows = numbers[0], perRow = numbers[1];
  const int64_t band = numbers.size() == 3 ? numbers[2] : 4096;
  if (rows <= 0 || perRow <= 0 || band < perRow || rows * perRow >= INT32_MAX || perRow > rows) {
    throw std::runtime_error("--synthetic=" + spec +
                             ": need 0 < PER_ROW <= BAND, PER_ROW <= ROWS and ROWS x PER_ROW "
                             "below 2^31 (int32 positions)");
  }
  const int64_t nnz = rows * perRow;
  Buffer pos = Buffer::zeros(DType::kI32, rows + 1);
  Buffer crd = Buffer::zeros(DType::kI32, nnz);
  Buffer vals = Buffer::zeros(DType::kF32, nnz);
  auto* p = pos.as<int32_t>();
  auto* c = crd.as<int32_t>();
  std::mt19937_64 rng(20241125);
  std::vector<int32_t> row;
  for (int64_t i = 0; i < rows; ++i) {
    p[i] = static_cast<int32_t>(i * perRow);
    const int64_t lo = std::clamp<int64_t>(i - band / 2, 0, rows - band > 0 ? rows - band : 0);
    const int64_t width = std::min(band, rows);
    std::uniform_int_distribution<int64_t> column(lo, lo + width - 1);
    row.clear();
    while (static_cast<int64_t>(row.size()) < perRow) {
      const auto j = static_cast<int32_t>(column(rng));
      if (std::find(row.begin(), row.end(), j) == row.end()) row.push_back(j);
    }
    std::sort(row.begin(), row.end());
    std::copy(row.begin(), row.end(), c + i * perRow);
  }
  p[rows] = static_cast<int32_t>(nnz);
  const std::vector<float> values = randomValues(nnz, 7);
  std::copy(values.begin(), values.end(), vals.as<float>());
  std::vector<LevelStorage> levels(2);
  levels[1].pos = std::move(pos);
  levels[1].crd = std::move(crd);
  Matrix m;
  m.path = "synthetic " + spec;
  m.label = "synthetic_banded_" + std::to_string(rows) + "x" + std::to_string(perRow) + "_band" +
            std::to_string(band);
  m.csr = Tensor({rows, rows}, DType::kF32, Format::parse("csr", 2), std::move(levels),
                 std::move(vals));
  m.rows = m.cols = rows;
  m.nnz = nnz;
  m.pos = m.csr.level(1).pos.as<int32_t>();
  m.crd = m.csr.level(1).crd.as<int32_t>();
  m.vals = m.csr.values().as<float>();
  return m;
}

std::vector<float> randomValues(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(count));
  for (float& v : out) v = value(rng);
  return out;
}

Tensor denseView(const std::vector<int64_t>& shape, const float* data) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const auto rank = static_cast<int32_t>(shape.size());
  return Tensor(shape, DType::kF32, Format::parse("dense", rank),
                std::vector<LevelStorage>(static_cast<size_t>(rank)),
                Buffer::view(DType::kF32, const_cast<float*>(data), count));
}

double Reference::sum() const {
  double s = 0;
  for (double v : values) s += v;
  return s;
}

double Reference::scaleSum() const {
  double s = 0;
  for (double v : scale) s += v;
  return s;
}

Reference referenceSpmm(const Matrix& a, const float* b, int64_t n) {
  Reference r;
  r.values.assign(static_cast<size_t>(a.rows * n), 0.0);
  r.scale.assign(static_cast<size_t>(a.rows * n), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    double* out = &r.values[static_cast<size_t>(i * n)];
    double* scale = &r.scale[static_cast<size_t>(i * n)];
    for (int64_t e = a.pos[i]; e < a.pos[i + 1]; ++e) {
      const double v = a.vals[e];
      const float* row = b + static_cast<int64_t>(a.crd[e]) * n;
      for (int64_t j = 0; j < n; ++j) {
        out[j] += v * row[j];
        scale[j] += std::fabs(v * row[j]);
      }
    }
  }
  return r;
}

Reference referenceSddmm(const Matrix& m, const float* x, const float* z, int64_t k) {
  Reference r;
  r.values.resize(static_cast<size_t>(m.nnz));
  r.scale.resize(static_cast<size_t>(m.nnz));
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t e = m.pos[i]; e < m.pos[i + 1]; ++e) {
      const float* xi = x + i * k;
      const float* zj = z + static_cast<int64_t>(m.crd[e]) * k;
      double dot = 0, scale = 0;
      for (int64_t q = 0; q < k; ++q) {
        dot += static_cast<double>(xi[q]) * zj[q];
        scale += std::fabs(static_cast<double>(xi[q]) * zj[q]);
      }
      r.values[static_cast<size_t>(e)] = m.vals[e] * dot;
      r.scale[static_cast<size_t>(e)] = std::fabs(m.vals[e]) * scale;
    }
  }
  return r;
}

namespace {

/// Within the tolerance; NaN matches NaN and an infinity the same infinity (inputs holding NaN or
/// Inf give them in the reference too, and the kernels follow torch's NaN rules).
bool close(double got, double want, double scale) {
  if (std::isnan(want) || std::isinf(want)) return std::isnan(want) ? std::isnan(got) : got == want;
  return std::fabs(got - want) <= 1e-4 * scale + 1e-30;
}

std::string mismatch(int64_t first, double got, double want, int64_t bad, int64_t count) {
  char text[200];
  std::snprintf(text, sizeof text,
                "element %lld is %.9g, float64 reference %.9g (%lld of %lld wrong)",
                static_cast<long long>(first), got, want, static_cast<long long>(bad),
                static_cast<long long>(count));
  return text;
}

}  // namespace

std::string compareToReference(const float* got, const Reference& want) {
  int64_t bad = 0, first = -1;
  const auto count = static_cast<int64_t>(want.values.size());
  for (int64_t e = 0; e < count; ++e) {
    const auto k = static_cast<size_t>(e);
    if (!close(got[e], want.values[k], want.scale[k])) {
      if (bad++ == 0) first = e;
    }
  }
  if (bad == 0) return "";
  return mismatch(first, got[first], want.values[static_cast<size_t>(first)], bad, count);
}

std::string compareSpgemm(const Matrix& a, const float* got, double* sum, double* scaleSum) {
  std::vector<double> row(static_cast<size_t>(a.cols)), scale(static_cast<size_t>(a.cols));
  int64_t bad = 0, first = -1;
  double firstGot = 0, firstWant = 0;
  *sum = 0;
  *scaleSum = 0;
  for (int64_t i = 0; i < a.rows; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    std::fill(scale.begin(), scale.end(), 0.0);
    for (int64_t e = a.pos[i]; e < a.pos[i + 1]; ++e) {
      const int64_t k = a.crd[e];
      for (int64_t f = a.pos[k]; f < a.pos[k + 1]; ++f) {
        const double p = static_cast<double>(a.vals[e]) * a.vals[f];
        row[static_cast<size_t>(a.crd[f])] += p;
        scale[static_cast<size_t>(a.crd[f])] += std::fabs(p);
      }
    }
    const float* out = got + i * a.cols;
    for (int64_t j = 0; j < a.cols; ++j) {
      const auto k = static_cast<size_t>(j);
      *sum += row[k];
      *scaleSum += scale[k];
      if (!close(out[j], row[k], scale[k]) && bad++ == 0) {
        first = i * a.cols + j;
        firstGot = out[j];
        firstWant = row[k];
      }
    }
  }
  return bad == 0 ? "" : mismatch(first, firstGot, firstWant, bad, a.rows * a.cols);
}

}  // namespace sparseflow::bench
