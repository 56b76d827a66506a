// `sparseflow-convert` as users run it: dense weights to 2:4 with the impact it reports checked
// against an independent computation; a checkpoint layer by layer with --include/--exclude (copied
// tensors byte for byte); the bundled ResNet-50 weights to their best formats in a directory; and
// bad input that must name itself and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "sparseflow/build.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/convert.h"
#include "sparseflow/io.h"
#include "sparseflow/nm.h"
#include "unit/tools/tool_process.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::ToolResult;
using testing::ToolTest;

const std::string kData = SPARSEFLOW_DATA_DIR;
const std::string kRn50 = kData + "/dlmc/rn50/magnitude_pruning/0.98";

/// 2:4 magnitude pruning done here, independently: in every 4 columns the 2 largest |w| stay
/// (ties to the lower column).
std::vector<float> prune24(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> p = w;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < cols; g += 4) {
      std::vector<int64_t> idx;
      for (int64_t c = g; c < std::min(g + 4, cols); ++c) idx.push_back(r * cols + c);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return std::abs(w[static_cast<size_t>(a)]) > std::abs(w[static_cast<size_t>(b)]);
      });
      for (size_t k = 2; k < idx.size(); ++k) p[static_cast<size_t>(idx[k])] = 0;
    }
  }
  return p;
}

/// The impact fields the tool reports, computed here in double precision.
void expectImpact(const Json& impact, const std::vector<float>& w, const std::vector<float>& p) {
  double maxErr = 0, sumErr = 0, sumSq = 0, norm = 0, kept = 0, all = 0;
  int64_t nonzeros = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double e = std::abs(static_cast<double>(w[i]) - p[i]);
    maxErr = std::max(maxErr, e);
    sumErr += e;
    sumSq += e * e;
    norm += static_cast<double>(w[i]) * w[i];
    all += std::abs(w[i]);
    if (p[i] != 0) kept += std::abs(w[i]), ++nonzeros;
  }
  EXPECT_DOUBLE_EQ(impact["max_error"].get<double>(), maxErr);
  EXPECT_NEAR(impact["mean_error"].get<double>(), sumErr / static_cast<double>(w.size()), 1e-12);
  EXPECT_NEAR(impact["relative_error"].get<double>(), std::sqrt(sumSq / norm), 1e-12);
  EXPECT_NEAR(impact["kept_magnitude"].get<double>(), kept / all, 1e-12);
  EXPECT_EQ(impact["kept"].get<int64_t>(), nonzeros);
  EXPECT_EQ(impact["total"].get<int64_t>(), static_cast<int64_t>(w.size()));
}

std::vector<float> randomWeights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> w(n);
  for (float& v : w) v = normal(rng);
  return w;
}

/// A 2-d little-endian f32 .npy written by hand.
void writeNpy2d(const std::string& path, const std::vector<float>& v, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(header.size() & 0xff)).put(static_cast<char>(header.size() >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

/// A .safetensors file written by hand from (name, dtype, shape, bytes) in data order.
struct RawArray {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::string handMadeCheckpoint(const std::vector<RawArray>& arrays, const std::string& metadata) {
  std::string header = "{\"__metadata__\":" + metadata;
  std::string data;
  for (const RawArray& a : arrays) {
    header += ",\"" + a.name + "\":{\"dtype\":\"" + a.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < a.shape.size(); ++i) {
      header += (i ? "," : "") + std::to_string(a.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + a.bytes.size()) + "]}";
    data += a.bytes;
  }
  header += "}";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  return out + header + data;
}

template <typename T>
std::string bytesOf(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::vector<float> asFloats(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

using Convert = ToolTest;

TEST_F(Convert, DenseNpyTo24ReportsTheImpactOfPruning) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<float> w = randomWeights(8 * 18, seed);  // 18 columns: a partial last group
  writeNpy2d(path("w.npy"), w, 8, 18);
  ToolResult r = run("sparseflow-convert", {"w.npy", "--to", "2:4", "-o", "w.sft", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "no progress bar when stderr is not a terminal";
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["tensors"].size(), 1u);
  const Json& t = j["tensors"][0];
  EXPECT_EQ(t["name"], "w");
  EXPECT_EQ(t["action"], "converted");
  EXPECT_EQ(t["from"], "dense");
  EXPECT_EQ(t["to"], "2:4");
  EXPECT_EQ(t["shape"], Json::array({8, 18}));
  const std::vector<float> pruned = prune24(w, 8, 18);
  expectImpact(t["impact"], w, pruned);
  Tensor back = read(path("w.sft"));
  EXPECT_EQ(back.format().toString(), "2:4");
  EXPECT_EQ(back.dtype(), DType::kF32) << "an f32 .npy stays f32 (it was written as f64)";
  EXPECT_EQ(t["bytes_after"].get<int64_t>(), back.storageBytes());
  EXPECT_EQ(asFloats(toDense(back)), pruned);

  // The text report names the columns and the numbers.
  r = run("sparseflow", {"convert", "w.npy", "--to", "2:4", "-o", "w2.sft"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("max err"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("converted 1 of 1 tensors to 2:4"), std::string::npos) << r.out;
}

TEST_F(Convert, CheckpointLayerByLayerWithIncludeAndExclude) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<float> fc0 = randomWeights(8 * 16, seed), bias = randomWeights(8, seed + 1),
                           dec = randomWeights(8 * 8, seed + 2);
  std::vector<float> fc1 = randomWeights(4 * 8, seed + 3);
  std::vector<uint16_t> fc1Bits;
  for (float& v : fc1) {  // BF16: the top half of the f32 bits, exactly
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits &= 0xffff0000u;
    std::memcpy(&v, &bits, 4);
    fc1Bits.push_back(static_cast<uint16_t>(bits >> 16));
  }
  const std::vector<int64_t> pos{0, 1, 2, 3};
  std::ofstream(path("ck.safetensors"), std::ios::binary)
      << handMadeCheckpoint({{"enc.0.fc.weight", "F32", {8, 16}, bytesOf(fc0)},
                             {"enc.0.fc.bias", "F32", {8}, bytesOf(bias)},
                             {"dec.fc.weight", "F32", {8, 8}, bytesOf(dec)},
                             {"pos", "I64", {4}, bytesOf(pos)},
                             {"enc.1.fc.weight", "BF16", {4, 8}, bytesOf(fc1Bits)}},
                            R"({"format":"pt"})");
  ToolResult r =
      run("sparseflow-convert", {"ck.safetensors", "--to", "2:4", "--include", "*.fc.weight",
                                 "--exclude", "dec.*", "-o", "out.safetensors", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(r.out);
  std::map<std::string, Json> byName;
  for (const Json& t : j["tensors"]) byName[t["name"].get<std::string>()] = t;
  ASSERT_EQ(byName.size(), 5u) << "every tensor is listed";
  EXPECT_EQ(byName["enc.0.fc.weight"]["action"], "converted");
  EXPECT_EQ(byName["enc.1.fc.weight"]["action"], "converted");
  EXPECT_EQ(byName["enc.1.fc.weight"]["dtype"], "bf16");
  EXPECT_EQ(byName["enc.0.fc.bias"]["action"], "copied");
  EXPECT_EQ(byName["enc.0.fc.bias"]["reason"], "not 2-d (shape [8])");
  EXPECT_EQ(byName["dec.fc.weight"]["reason"], "excluded by 'dec.*'");
  EXPECT_EQ(byName["pos"]["reason"], "dtype i64 is not a float weight");
  expectImpact(byName["enc.0.fc.weight"]["impact"], fc0, prune24(fc0, 8, 16));
  expectImpact(byName["enc.1.fc.weight"]["impact"], fc1, prune24(fc1, 4, 8));

  Checkpoint in = Checkpoint::open(path("ck.safetensors"));
  Checkpoint out = Checkpoint::open(path("out.safetensors"));
  EXPECT_EQ(out.entries().size(), 5u);
  EXPECT_EQ(out.metadata().at("format"), "pt") << "the checkpoint's metadata is kept";
  for (const char* copied : {"enc.0.fc.bias", "dec.fc.weight", "pos"}) {
    EXPECT_EQ(out.entry(copied).format, "dense");
    EXPECT_EQ(out.entry(copied).dtype, in.entry(copied).dtype);
    EXPECT_EQ(out.arrayBytes(copied), in.arrayBytes(copied)) << copied << " is copied unchanged";
  }
  EXPECT_EQ(out.entry("enc.0.fc.weight").format, "2:4");
  EXPECT_EQ(asFloats(toDense(out.tensor("enc.0.fc.weight"))), prune24(fc0, 8, 16));
  Tensor t1 = out.tensor("enc.1.fc.weight");
  EXPECT_EQ(t1.dtype(), DType::kBF16) << "the stored type is kept";
  EXPECT_EQ(asFloats(toDense(t1)), prune24(fc1, 4, 8));
  EXPECT_EQ(files(), (std::vector<std::string>{"ck.safetensors", "out.safetensors"}));
}

TEST_F(Convert, ResNet50WeightsToTheirSmallestFormatsInADirectory) {
  ToolResult r = run("sparseflow-convert", {kRn50, "--to", "smallest", "-o", "rn50", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["tensors"].size(), 54u) << "the whole network";
  std::vector<std::string> written = files("rn50");
  ASSERT_EQ(written.size(), 54u);
  ReadOptions dlmc;
  dlmc.fill = ValueFill::kRandom;  // the tool's default: uniform values, seed 0
  for (const Json& t : j["tensors"]) {
    const std::string name = t["name"];
    SCOPED_TRACE(name);
    EXPECT_EQ(t["action"], "converted");
    const Tensor original = read(kRn50 + "/" + name + ".smtx", dlmc);
    const Tensor back = read(path("rn50/" + name + ".sft"));
    EXPECT_EQ(toDense(back), toDense(original)) << "best is exact";
    // The smallest of the candidates, computed here.
    int64_t smallest = original.shape()[0] * original.shape()[1] * 4;
    std::string format = "dense";
    std::vector<std::string> candidates = {"csr", "bsr:4x4", "ell"};
    if (nm::isNM(original, {2, 4})) candidates.push_back("2:4");
    for (const std::string& f : candidates) {
      const int64_t bytes = convert(original, f).storageBytes();
      if (bytes < smallest) smallest = bytes, format = f;
    }
    EXPECT_EQ(t["bytes_after"].get<int64_t>(), smallest);
    EXPECT_EQ(back.storageBytes(), smallest);
    EXPECT_EQ(t["impact"]["max_error"], 0.0);
  }
}

TEST_F(Convert, BestIsTheFastestExactFormatByTheAutoconfiguratorAndIsRecorded) {
  // Two ResNet-50 layers (0.9 sparse) as a directory; the first run searches (the shipped model
  // ranks, the two best-ranked configurations, the format as read and dense are timed), the
  // second finds both decisions in the database.
  const std::string rn50 = kData + "/dlmc/rn50/magnitude_pruning/0.9";
  fs::create_directory(dir_ / "in");
#ifdef SPARSEFLOW_SANITIZED
  // Under the sanitizers one layer (the instrumented space enumeration took 7 s for two).
  const std::vector<std::string> layers = {"initial_conv"};
#else
  const std::vector<std::string> layers = {"initial_conv", "bottleneck_1_block_group1_1_1"};
#endif
  for (const std::string& name : layers)
    fs::copy_file(rn50 + "/" + name + ".smtx", dir_ / "in" / (name + ".smtx"));
  for (const bool recorded : {false, true}) {
    SCOPED_TRACE(recorded ? "recorded" : "searched");
    const std::string out = recorded ? "again" : "best";
    ToolResult r = run("sparseflow-convert", {"in", "--to", "best", "--batch", "16", "--db",
                                              "db.jsonl", "-o", out, "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const Json j = Json::parse(r.out);
    ASSERT_EQ(j["tensors"].size(), layers.size());
    ReadOptions dlmc;
    dlmc.fill = ValueFill::kRandom;
    for (const Json& t : j["tensors"]) {
      const std::string name = t["name"];
      SCOPED_TRACE(name);
      EXPECT_EQ(toDense(read(path(out + "/" + name + ".sft"))),
                toDense(read(rn50 + "/" + name + ".smtx", dlmc)))
          << "best is exact";
      const Json& tuned = t["tuned"];
      EXPECT_EQ(tuned["from_database"].get<bool>(), recorded);
      EXPECT_EQ(tuned["batch"], 16);
      EXPECT_GT(tuned["ms"].get<double>(), 0.0);
      EXPECT_GT(tuned["dense_ms"].get<double>(), 0.0);
      // The chosen one is no slower than the format as read and than dense.
      EXPECT_LE(tuned["ms"].get<double>(), tuned["dense_ms"].get<double>());
      if (!recorded) {
        EXPECT_LE(tuned["ms"].get<double>(), tuned["as_read_ms"].get<double>());
      }
      EXPECT_EQ(t["impact"]["max_error"], 0.0);
    }
  }
  const std::string db = testing::slurpFile(dir_ / "db.jsonl");
  EXPECT_EQ(std::count(db.begin(), db.end(), '\n'), static_cast<int64_t>(layers.size()))
      << "one decision per layer";
}

TEST_F(Convert, SmallestAndBestChooseAmongMatrixFormatsOnly) {
  const std::string tensor = kData + "/mlir/test/Integration/data/mttkrp_b.tns";
  for (const char* target : {"smallest", "best"}) {
    SCOPED_TRACE(target);
    ToolResult r = run("sparseflow-convert", {tensor, "--to", target, "-o", "out.sft"});
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find(std::string("--to ") + target +
                         " chooses among matrix formats; the tensor has rank 3"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(files().empty()) << "nothing written";
  }
}

TEST_F(Convert, NamesCannotLeaveTheOutputDirectory) {
  const std::vector<float> w(16, 1.0f);
  std::ofstream(path("ck.safetensors"), std::ios::binary) << handMadeCheckpoint(
      {{"../../evil", "F32", {4, 4}, bytesOf(w)}, {"a/b", "F32", {4, 4}, bytesOf(w)}}, "{}");
  ToolResult r = run("sparseflow", {"convert", "ck.safetensors", "--to", "csr", "-o", "out/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(files(), (std::vector<std::string>{"ck.safetensors", "out"}));
  EXPECT_EQ(files("out"), (std::vector<std::string>{".._.._evil.sft", "a_b.sft"}));
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "evil.sft"));
}

TEST_F(Convert, BadInputNamesItselfAndWritesNothing) {
  const std::vector<float> w = randomWeights(16, 1);
  const std::string good = handMadeCheckpoint(
      {{"a", "F32", {4, 4}, bytesOf(w)}, {"b", "F32", {4, 4}, bytesOf(w)}}, "{}");
  std::ofstream(path("ck.safetensors"), std::ios::binary) << good;
  std::ofstream(path("cut.safetensors"), std::ios::binary) << good.substr(0, good.size() - 3);
  fs::create_directory(dir_ / "full");
  std::ofstream(dir_ / "full" / "keep.txt") << "mine";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"cut.safetensors", "--to", "2:4", "-o", "o.safetensors"},
       "cut.safetensors: tensor 'b': data_offsets [64, 128] run past the end of the 125-byte "
       "data buffer"},
      {{"ck.safetensors", "--to", "2:4", "-o", "o.txt"},
       "o.txt: cannot tell the output kind from the extension"},
      {{"ck.safetensors", "--to", "2:4", "-o", "o.sft"},
       "o.sft: a .sft file holds one tensor but 2 were converted (a, b)"},
      {{"ck.safetensors", "--to", "2:4", "-o", "full"},
       "full: exists and is not an empty directory"},
      {{"ck.safetensors", "--to", "bsr:3", "-o", "o.safetensors"}, "bsr:3"},
      {{"missing.npy", "--to", "2:4", "-o", "o.sft"}, "missing.npy: no such file or directory"},
      {{kData + "/mlir/test/Integration/data/test.tns", "--to", "2:4", "-o", "o.sft"},
       "test.tns: tensor 'test': "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " -o " + c.args.back());
    std::vector<std::string> args = {"convert"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ToolResult r = run("sparseflow", args);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(files(), (std::vector<std::string>{"ck.safetensors", "cut.safetensors", "full"}))
        << "nothing written";
    EXPECT_EQ(files("full"), (std::vector<std::string>{"keep.txt"}));
  }
}

}  // namespace
}  // namespace sparseflow
