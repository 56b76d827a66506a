// Kernel specs, operands, float64 checks, timing and peers of one compiled-kernel benchmark case
// (see kernel_case.h).
#include "common/kernel_case.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "common/npy_file.h"
#include "common/report.h"
#include "sparseflow/build.h"
#include "sparseflow/convert.h"

namespace sparseflow::bench {
namespace {

/// "32" after `prefix` (with or without a colon) as a positive size; `fallback` when nothing
/// follows; -1 when something else does.
int64_t sizeAfter(const std::string& text, const std::string& prefix, int64_t fallback) {
  std::string rest = text.substr(prefix.size());
  if (rest.empty()) return fallback;
  if (rest[0] == ':') rest = rest.substr(1);
  if (rest.empty() || rest.size() > 6 ||
      !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  const int64_t n = std::stoll(rest);
  return n > 0 ? n : -1;
}

std::string fmt(const char* pattern, double a, double b = 0) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

/// Empty when `got` is within 1e-4 of the reference's magnitude sum (float32 rounding of every
/// term, summed in any order); else both sums.
std::string checkSum(double got, double want, double scaleSum) {
  if (std::fabs(got - want) <= 1e-4 * scaleSum + 1e-20) return "";
  return fmt("sum %.9g, float64 reference %.9g", got, want);
}

/// SDDMM's result in a format other than csr: its entries gathered onto M's csr positions (entries
/// outside M's pattern must be zero) and then compared element by element.
std::string compareSddmmEntries(const Tensor& out, const Matrix& m, const Reference& ref) {
  std::vector<std::pair<int64_t, int64_t>> where;  // (row-major key, csr position) of M
  where.reserve(static_cast<size_t>(m.nnz));
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t e = m.pos[i]; e < m.pos[i + 1]; ++e) where.emplace_back(i * m.cols + m.crd[e], e);
  }
  std::sort(where.begin(), where.end());
  std::vector<float> got(static_cast<size_t>(m.nnz), 0.0f);
  const Coo coo = toCoo(out);
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    const int64_t i = coo.coords[static_cast<size_t>(2 * e)];
    const int64_t j = coo.coords[static_cast<size_t>(2 * e + 1)];
    const double v = coo.values[static_cast<size_t>(e)];
    const auto at =
        std::lower_bound(where.begin(), where.end(), std::make_pair(i * m.cols + j, int64_t{-1}));
    if (at != where.end() && at->first == i * m.cols + j) {
      got[static_cast<size_t>(at->second)] += static_cast<float>(v);
    } else if (v != 0) {
      return fmt("the result has %.9g at (%.0f,", v, static_cast<double>(i)) +
             fmt("%.0f), outside M's pattern", static_cast<double>(j));
    }
  }
  return compareToReference(got.data(), ref);
}

}  // namespace

std::string KernelSpec::name() const {
  switch (op) {
    case SparseOp::kSpmv: return "spmv";
    case SparseOp::kSpmm: return "spmm:" + std::to_string(n);
    case SparseOp::kSddmm: return "sddmm:" + std::to_string(n);
    case SparseOp::kSpgemm: return "spgemm";
  }
  return "?";
}

std::string KernelSpec::id() const {
  std::string id = name();
  id.erase(std::remove(id.begin(), id.end(), ':'), id.end());
  return id;
}

std::string KernelSpec::text() const {
  switch (op) {
    case SparseOp::kSpmv: return "y(i) = A(i,j) * x(j)";
    case SparseOp::kSpmm:
    case SparseOp::kSpgemm: return "C(i,j) = A(i,k) * B(k,j)";
    case SparseOp::kSddmm: return "Y(i,j) = M(i,j) * sum(k, X(i,k) * Z(j,k))";
  }
  return "";
}

KernelOptions KernelSpec::options() const {
  KernelOptions options;
  switch (op) {
    case SparseOp::kSpmv:
    case SparseOp::kSpmm: options.formats = {{"A", format}}; break;
    case SparseOp::kSddmm: options.formats = {{"M", format}, {"Y", format}}; break;
    case SparseOp::kSpgemm:  // the product is assembled into csr, as the peers' is sparse
      options.formats = {{"A", format}, {"B", format}, {"C", "csr"}};
      break;
  }
  return options;
}

KernelSpec parseKernelSpec(const std::string& text, const std::string& format) {
  KernelSpec k;
  k.format = format;
  if (text == "spmv") {
    k.op = SparseOp::kSpmv;
  } else if (text == "spgemm") {
    k.op = SparseOp::kSpgemm;
    k.n = 0;
  } else if (text.rfind("spmm", 0) == 0 && (k.n = sizeAfter(text, "spmm", 32)) > 0) {
    k.op = SparseOp::kSpmm;
  } else if (text.rfind("sddmm", 0) == 0 && (k.n = sizeAfter(text, "sddmm", 32)) > 0) {
    k.op = SparseOp::kSddmm;
  } else {
    throw std::invalid_argument("unknown kernel '" + text +
                                "' (expected spmv, spmm:N, sddmm:K or spgemm)");
  }
  return k;
}

std::string skipReason(const KernelSpec& k, const Matrix& m) {
  const double rows = static_cast<double>(m.rows), cols = static_cast<double>(m.cols);
  const double n = static_cast<double>(k.n);
  const double operands = k.op == SparseOp::kSpmm    ? (cols + rows) * n * 4
                          : k.op == SparseOp::kSddmm ? (rows + cols) * n * 4
                                                     : 0.0;
  if (operands > kDenseLimitBytes) {  // e.g. the synthetic SpMV matrices past the LLC
    return "its dense operands would take " + formatBytes(operands) + " (limit " +
           formatBytes(kDenseLimitBytes) + ")";
  }
  if (k.op != SparseOp::kSpgemm) return "";
  if (m.rows != m.cols) {
    return fmt("A is %.0fx%.0f: A*A needs a square matrix", static_cast<double>(m.rows),
               static_cast<double>(m.cols));
  }
  const double dense = static_cast<double>(m.rows) * static_cast<double>(m.cols) * 4;
  if (dense >= kDenseLimitBytes) {
    return "the dense result would take " + formatBytes(dense) + " (limit " +
           formatBytes(kDenseLimitBytes) + ")";
  }
  return "";
}

Operands makeOperands(const Matrix& m, const std::vector<KernelSpec>& kernels) {
  Operands o;
  for (const KernelSpec& k : kernels) {
    if (!skipReason(k, m).empty()) continue;
    if (k.op == SparseOp::kSpmv && o.x.empty()) o.x = randomValues(m.cols, 1);
    if (k.op == SparseOp::kSpmm && !o.b.count(k.n)) {
      o.b[k.n] = randomValues(m.cols * k.n, 1000 + static_cast<uint64_t>(k.n));
    }
    if (k.op == SparseOp::kSddmm && !o.xs.count(k.n)) {
      o.xs[k.n] = randomValues(m.rows * k.n, 2000 + static_cast<uint64_t>(k.n));
      o.zs[k.n] = randomValues(m.cols * k.n, 3000 + static_cast<uint64_t>(k.n));
    }
  }
  return o;
}

void writePeerInputs(const std::string& dir, const Matrix& m, const Operands& o) {
  std::filesystem::create_directories(dir);
  writeNpy(dir + "/A_pos.npy", m.pos, m.rows + 1);
  writeNpy(dir + "/A_crd.npy", m.crd, m.nnz);
  writeNpy(dir + "/A_vals.npy", m.vals, m.nnz);
  const int64_t dims[3] = {m.rows, m.cols, m.nnz};
  writeNpy(dir + "/dims.npy", dims, 3);
  auto write = [&](const std::string& name, const std::vector<float>& v) {
    writeNpy(dir + "/" + name + ".npy", v.data(), static_cast<int64_t>(v.size()));
  };
  if (!o.x.empty()) write("x", o.x);
  for (const auto& [n, b] : o.b) write("B" + std::to_string(n), b);
  for (const auto& [k, xs] : o.xs) write("X" + std::to_string(k), xs);
  for (const auto& [k, zs] : o.zs) write("Z" + std::to_string(k), zs);
}

Work workOf(const KernelSpec& k, const Matrix& m) {
  const double nnz = static_cast<double>(m.nnz), rows = static_cast<double>(m.rows),
               cols = static_cast<double>(m.cols), n = static_cast<double>(k.n);
  switch (k.op) {
    case SparseOp::kSpmv: return {m.bytes() + (cols + rows) * 4, 2 * nnz};
    case SparseOp::kSpmm: return {m.bytes() + (cols + rows) * n * 4, 2 * nnz * n};
    case SparseOp::kSddmm:  // output: M's pattern with new values
      return {m.bytes() + (rows + cols) * n * 4 + nnz * 4, 2 * nnz * n + nnz};
    case SparseOp::kSpgemm:  // A read twice, the csr product written
      return {2 * m.bytes() + static_cast<double>(m.spgemmEntries()) * 8 + (rows + 1) * 4,
              m.spgemmFlops()};
  }
  return {};
}

BoundCase::BoundCase(const KernelSpec& k, const Matrix& m, const Operands& ops)
    : sparse(k.format == "csr" ? m.csr : convert(m.csr, k.format)) {
  switch (k.op) {
    case SparseOp::kSpmv:
      x = denseView({m.cols}, ops.x.data());
      inputs = {{"A", &sparse}, {"x", &x}};
      break;
    case SparseOp::kSpmm:
      b = denseView({m.cols, k.n}, ops.b.at(k.n).data());
      inputs = {{"A", &sparse}, {"B", &b}};
      break;
    case SparseOp::kSddmm:
      xs = denseView({m.rows, k.n}, ops.xs.at(k.n).data());
      zs = denseView({m.cols, k.n}, ops.zs.at(k.n).data());
      inputs = {{"M", &sparse}, {"X", &xs}, {"Z", &zs}};
      break;
    case SparseOp::kSpgemm: inputs = {{"A", &sparse}, {"B", &sparse}}; break;
  }
}

CaseCheck checkKernel(const Kernel& kernel, const BoundCase& c, const KernelSpec& k,
                      const Matrix& m, const Operands& ops) {
  CaseCheck check;
  try {
    const Tensor out = kernel.run(c.inputs);
    if (k.op == SparseOp::kSpgemm) {  // csr: compared through its dense form (not timed)
      const Tensor dense = convert(out, "dense");
      check.wrong = compareSpgemm(m, dense.values().as<float>(), &check.refSum, &check.refScale);
      if (check.wrong.empty() && out.numStored() != m.spgemmEntries()) {
        check.wrong = "the csr product stores " + std::to_string(out.numStored()) +
                      " entries, the pattern of A*A has " + std::to_string(m.spgemmEntries());
      }
      return check;
    }
    const Reference ref =
        k.op == SparseOp::kSddmm
            ? referenceSddmm(m, ops.xs.at(k.n).data(), ops.zs.at(k.n).data(), k.n)
            : referenceSpmm(m, k.op == SparseOp::kSpmv ? ops.x.data() : ops.b.at(k.n).data(), k.n);
    check.refSum = ref.sum();
    check.refScale = ref.scaleSum();
    if (k.op == SparseOp::kSddmm && k.format != "csr") {
      check.wrong = compareSddmmEntries(out, m, ref);
    } else if (out.values().size() != static_cast<int64_t>(ref.values.size())) {
      check.wrong = "the result has " + std::to_string(out.values().size()) + " values, expected " +
                    std::to_string(ref.values.size());
    } else {
      check.wrong = compareToReference(out.values().as<float>(), ref);
    }
  } catch (const std::exception& e) {
    check.wrong = std::string("run failed: ") + e.what();
  }
  return check;
}

TimingOptions batched(int reps) {
  return TimingOptions{reps, 0.0, 0.01};
}

double timeKernel(const Kernel& kernel, const BoundCase& c, int reps) {
  Tensor reused = kernel.run(c.inputs);
  return timeMedian([&] { kernel.run(c.inputs, reused); }, batched(reps));
}

PeerFactory inProcessPeer(const std::string& peer) {
  if (peer == "dense") return &makeDensePeer;
  if (peer == "eigen") return &makeEigenPeer;
  if (peer == "graphblas") return &makeGraphBlasPeer;
  return nullptr;
}

const std::vector<std::string>& pythonPeers() {
  static const std::vector<std::string> peers = {"numpy", "scipy", "torch"};
  return peers;
}

SparseProblem sparseProblem(const KernelSpec& k, const Matrix& m, const Operands& ops,
                            int threads) {
  SparseProblem p;
  p.op = k.op;
  p.rows = m.rows;
  p.cols = m.cols;
  p.nnz = m.nnz;
  p.pos = m.pos;
  p.crd = m.crd;
  p.vals = m.vals;
  p.n = k.n;
  if (k.op == SparseOp::kSpmv) p.b = ops.x.data();
  if (k.op == SparseOp::kSpmm) p.b = ops.b.at(k.n).data();
  if (k.op == SparseOp::kSddmm) {
    p.x = ops.xs.at(k.n).data();
    p.z = ops.zs.at(k.n).data();
  }
  p.threads = threads;
  return p;
}

PeerTime measurePeer(const std::string& peer, const SparseProblem& p, const CaseCheck& ref,
                     int reps) {
  PeerTime t;
  t.peer = peer;
  const PeerFactory make = inProcessPeer(peer);
  if (!make) throw std::invalid_argument("measurePeer: '" + peer + "' is not an in-process peer");
  std::string why;
  std::unique_ptr<SparsePeer> made;
  try {
    made = make(p, &why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!made) {
    t.problem = why;
    return t;
  }
  t.name = made->name();
  t.how = made->how();
  try {
    made->run();
    double sum = 0;
    int64_t stored = 0;
    made->check(&sum, &stored);
    t.problem = checkSum(sum, ref.refSum, ref.refScale);
    t.wrong = !t.problem.empty();
    if (!t.wrong) t.seconds = timeMedian([&] { made->run(); }, batched(reps));
  } catch (const std::exception& e) {
    t.problem = e.what();
  }
  return t;
}

std::string pythonCase(size_t input, const std::string& library, const std::string& kernelId) {
  return std::to_string(input) + "/" + library + "/" + kernelId;
}

PeerRun runPythonPeers(const PythonRun& run, const std::vector<PythonInput>& inputs,
                       const PeerRunOptions& options) {
  std::vector<std::string> argv = {run.python,  run.script,
                                   "--reps",    std::to_string(run.reps),
                                   "--threads", std::to_string(run.threads)};
  std::string libraries;
  for (const std::string& lib : run.libraries) libraries += (libraries.empty() ? "" : ",") + lib;
  argv.insert(argv.end(), {"--libs", libraries});
  if (run.strict) argv.push_back("--strict");
  for (const PythonInput& input : inputs) {
    std::string kernels;
    for (const std::string& k : input.kernels) kernels += (kernels.empty() ? "" : ",") + k;
    argv.insert(argv.end(), {"--dir", input.dir, "--kernels", kernels});
  }
  PeerRunOptions withThreads = options;
  withThreads.env.push_back("OMP_NUM_THREADS=" + std::to_string(run.threads));
  withThreads.env.push_back("OPENBLAS_NUM_THREADS=" + std::to_string(run.threads));
  return runPeer(argv, withThreads);
}

PeerTime pythonPeerTime(const PeerRun& run, const std::string& library, const std::string& caseName,
                        const CaseCheck& ref, int threads) {
  PeerTime t;
  t.peer = library;
  // "scipy 1.10.1; torch 1.13.0a0" → this library's part.
  const auto at = run.name.find(library + " ");
  t.name = at == std::string::npos ? library : run.name.substr(at, run.name.find(';', at) - at);
  t.how = library == "scipy"   ? "1 thread"
          : library == "numpy" ? "dense, " + std::to_string(threads) + " BLAS threads"
                               : std::to_string(threads) + " threads";
  const auto result = run.results.find(caseName);
  if (result == run.results.end()) {
    const auto failed = run.failed.find(caseName);
    const auto missing = run.unavailable.find(library);
    t.problem = failed != run.failed.end()         ? failed->second
                : missing != run.unavailable.end() ? "not available: " + missing->second
                                                   : "no result";
    return t;
  }
  std::istringstream check(result->second.check);
  double sum = NAN;
  for (std::string field; check >> field;) {
    if (field.rfind("sum=", 0) == 0) sum = std::stod(field.substr(4));
    if (field.rfind("via=", 0) == 0) t.how += ", " + field.substr(4);
  }
  t.problem = checkSum(sum, ref.refSum, ref.refScale);
  t.wrong = !t.problem.empty();
  if (!t.wrong) t.seconds = result->second.seconds;
  return t;
}

}  // namespace sparseflow::bench
