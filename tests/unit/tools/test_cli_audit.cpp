// `sparseflow-audit` as users run it, on bundled DLMC ResNet-50 weights: every number of the JSON
// report checked against the .smtx files read here and against the report's own measured times
// (the cost calculator's arithmetic); the text table; skipped tensors; errors that name the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "unit/tools/tool_process.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::ToolResult;
using testing::ToolTest;

const std::string kRn50 = std::string(SPARSEFLOW_DATA_DIR) + "/dlmc/rn50/magnitude_pruning/0.98";
const std::vector<std::string> kLayers = {"bottleneck_1_block_group1_1_1",  // 64x256
                                          "bottleneck_3_block_group1_1_1",  // 256x64
                                          "initial_conv"};                  // 64x147

/// A DLMC pattern read here: shape, nonzeros, and whether every 4 columns hold at most 2.
struct Pattern {
  int64_t rows = 0, cols = 0, nnz = 0;
  bool fits24 = true;
};
Pattern readPattern(const std::string& path) {
  std::ifstream in(path);
  Pattern p;
  char comma;
  in >> p.rows >> comma >> p.cols >> comma >> p.nnz;
  std::vector<int64_t> offsets(static_cast<size_t>(p.rows + 1)), cols(static_cast<size_t>(p.nnz));
  for (int64_t& o : offsets) in >> o;
  for (int64_t& c : cols) in >> c;
  for (int64_t r = 0; r < p.rows; ++r) {
    std::map<int64_t, int> perGroup;
    for (int64_t k = offsets[static_cast<size_t>(r)]; k < offsets[static_cast<size_t>(r + 1)];
         ++k) {
      if (++perGroup[cols[static_cast<size_t>(k)] / 4] > 2) p.fits24 = false;
    }
  }
  return p;
}

using Audit = ToolTest;

TEST_F(Audit, JsonReportAgreesWithTheFilesAndWithItsOwnTimes) {
  fs::create_directory(dir_ / "w");
  for (const std::string& l : kLayers) {
    fs::copy_file(kRn50 + "/" + l + ".smtx", dir_ / "w" / (l + ".smtx"));
  }
  std::ofstream(dir_ / "w" / "README.txt") << "not a weight";
  ToolResult r = run("sparseflow-audit", {"w", "--json", "--runs", "3", "--batch", "1,4", "--load",
                                          "12345", "--machine-cost", "2.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress bar when piped";
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["batches"], Json::array({1, 4}));
  EXPECT_GE(j["machine"]["threads"].get<int>(), 1);
  ASSERT_EQ(j["layers"].size(), 3u);
  int64_t denseBytes = 0, nmBytes = 0;
  std::vector<double> denseMs(2, 0), nmMs(2, 0), exactMs(2, 0);
  for (size_t i = 0; i < 3; ++i) {
    const Json& l = j["layers"][i];
    SCOPED_TRACE(kLayers[i]);
    EXPECT_EQ(l["name"], kLayers[i]) << "files in name order";
    const Pattern p = readPattern(kRn50 + "/" + kLayers[i] + ".smtx");
    EXPECT_EQ(l["shape"], Json::array({p.rows, p.cols}));
    EXPECT_EQ(l["nonzeros"].get<int64_t>(), p.nnz);
    EXPECT_DOUBLE_EQ(l["density"].get<double>(),
                     static_cast<double>(p.nnz) / static_cast<double>(p.rows * p.cols));
    EXPECT_EQ(l["fits_2_4"].get<bool>(), p.fits24);
    EXPECT_EQ(l["prune_2_4"]["relative_error"].get<double>() == 0, p.fits24);
    EXPECT_GT(l["prune_2_4"]["kept_magnitude"].get<double>(), 0.9) << "98% sparse: little to cut";
    // Memory: f32 dense; 2:4 = values (rows x groups x 2 x 4 B) + 2-bit offsets; csr arrays.
    const int64_t groups = (p.cols + 3) / 4, slots = p.rows * groups * 2;
    EXPECT_EQ(l["bytes"]["dense"].get<int64_t>(), p.rows * p.cols * 4);
    EXPECT_EQ(l["bytes"]["nm_2_4"].get<int64_t>(), slots * 4 + (slots * 2 + 7) / 8);
    EXPECT_EQ(l["bytes"]["csr"].get<int64_t>(), (p.rows + 1) * 4 + p.nnz * 8);
    int64_t smallest = INT64_MAX;
    for (const auto& [format, bytes] : l["bytes"].items()) {
      if (format != "nm_2_4" || p.fits24) smallest = std::min(smallest, bytes.get<int64_t>());
    }
    EXPECT_EQ(l["smallest_bytes"].get<int64_t>(), smallest);
    EXPECT_LT(l["output_error_exact"].get<double>(), 1e-5) << "exact formats compute the same";
    if (p.fits24) {
      EXPECT_LT(l["output_error_2_4"].get<double>(), 1e-5);
    }
    denseBytes += l["bytes"]["dense"].get<int64_t>();
    nmBytes += l["bytes"]["nm_2_4"].get<int64_t>();
    ASSERT_EQ(l["timings"].size(), 2u);
    for (size_t b = 0; b < 2; ++b) {
      const Json& t = l["timings"][b];
      EXPECT_EQ(t["batch"], b == 0 ? 1 : 4);
      const double dense = t["dense_ms"], nm = t["nm_2_4_ms"];
      EXPECT_GT(dense, 0);
      EXPECT_GT(nm, 0);
      EXPECT_DOUBLE_EQ(t["speedup_2_4"].get<double>(), dense / nm);
      std::string fastest;
      double fastestMs = 0;
      for (const auto& [format, ms] : t["formats_ms"].items()) {
        EXPECT_GT(ms.get<double>(), 0) << format;
        if (fastest.empty() || ms.get<double>() < fastestMs) fastest = format, fastestMs = ms;
      }
      EXPECT_EQ(t["formats_ms"].size(), 3u) << "csr, bsr:4x4 and ell by default";
      EXPECT_EQ(t["best_format"], fastest);
      EXPECT_DOUBLE_EQ(t["speedup_best"].get<double>(), dense / fastestMs);
      double exact = std::min(dense, fastestMs);
      if (p.fits24) exact = std::min(exact, nm);
      EXPECT_DOUBLE_EQ(t["exact_ms"].get<double>(), exact);
      denseMs[b] += dense;
      nmMs[b] += nm;
      exactMs[b] += exact;
    }
  }
  // Totals and the cost calculator, from the layers' own numbers.
  const Json& totals = j["totals"];
  EXPECT_EQ(totals["dense"]["bytes"].get<int64_t>(), denseBytes);
  EXPECT_EQ(totals["nm_2_4"]["bytes"].get<int64_t>(), nmBytes);
  const std::vector<std::pair<std::string, std::vector<double>>> plans = {
      {"dense", denseMs}, {"nm_2_4", nmMs}, {"best_exact", exactMs}};
  for (const auto& [plan, ms] : plans) {
    SCOPED_TRACE(plan);
    const Json& p = totals[plan];
    EXPECT_NEAR(p["latency_ms"]["1"].get<double>(), ms[0], 1e-9 * ms[0]);
    EXPECT_NEAR(p["latency_ms"]["4"].get<double>(), ms[1], 1e-9 * ms[1]);
    const double throughput = 4 * 1000.0 / ms[1];  // the serving batch is the last one
    EXPECT_NEAR(p["throughput"].get<double>(), throughput, 1e-9 * throughput);
    EXPECT_EQ(p["machines"].get<double>(), std::ceil(12345 / p["throughput"].get<double>()));
    EXPECT_NEAR(p["cost_per_million"].get<double>(), 2.5 / (throughput * 3600) * 1e6,
                1e-9 * p["cost_per_million"].get<double>());
    EXPECT_DOUBLE_EQ(p["cost_per_hour"].get<double>(), p["machines"].get<double>() * 2.5);
  }
  EXPECT_EQ(j["cost_model"]["load"], 12345.0);
  EXPECT_EQ(j["cost_model"]["serving_batch"], 4);
  EXPECT_GE(j["assumptions"].size(), 5u);
}

TEST_F(Audit, TextTableAndTheToolNames) {
  ToolResult r = run("sparseflow", {"audit", kRn50 + "/" + kLayers[2] + ".smtx", "--runs", "2",
                                    "--batch", "2", "--formats", "csr"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* text :
       {"initial_conv", "64x147", "2:4 fits", "best fmt@2", "dense ms@2", "weights memory",
        "cost per million inferences", "machines for 1000/s", "assumptions:", "sequentially"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in\n" << r.out;
  }
  // The tool names are links to `sparseflow`, which runs the subcommand they name.
  for (const char* tool : {"sparseflow-audit", "sparseflow-convert", "sparseflow-benchmark"}) {
    EXPECT_EQ(fs::read_symlink(fs::path(SPARSEFLOW_TOOLS_DIR) / tool), "sparseflow") << tool;
  }
  for (const char* tool : {"sparseflow-audit", "sparseflow-convert"}) {
    r = run(tool, {"--help"});
    EXPECT_EQ(r.status, 0) << tool << ": " << r.err;
    EXPECT_NE(r.out.find(std::string(tool).substr(11)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--include"), std::string::npos) << r.out;
  }
}

TEST_F(Audit, CheckpointTensorsThatAreNotWeightsAreListed) {
  // A 2-d f32 weight, a bias and an int tensor, by hand; only the weight is audited.
  std::vector<float> w(8 * 8, 0.0f);
  for (int i = 0; i < 8; ++i) w[static_cast<size_t>(i * 8 + i)] = 1.0f + static_cast<float>(i);
  const std::string header = R"({"fc.weight":{"dtype":"F32","shape":[8,8],"data_offsets":[0,256]},)"
                             R"("fc.bias":{"dtype":"F32","shape":[8],"data_offsets":[256,288]},)"
                             R"("ids":{"dtype":"I32","shape":[2],"data_offsets":[288,296]}})";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  file +=
      header + std::string(reinterpret_cast<const char*>(w.data()), 256) + std::string(40, '\0');
  std::ofstream(path("m.safetensors"), std::ios::binary) << file;
  ToolResult r = run("sparseflow-audit", {"m.safetensors", "--runs", "2", "--batch", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fc.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not audited: fc.bias (not 2-d (shape [8]))"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not audited: ids (dtype i32 is not a float weight)"), std::string::npos);
  r = run("sparseflow-audit", {"m.safetensors", "--runs", "2", "--batch", "1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["layers"].size(), 1u);
  EXPECT_EQ(j["layers"][0]["nonzeros"], 8);
  EXPECT_TRUE(j["layers"][0]["fits_2_4"].get<bool>()) << "a diagonal fits 2:4";
  EXPECT_EQ(j["layers"][0]["smallest_format"], "ell") << "8 slots of crd + value: 64 bytes";
  EXPECT_EQ(j["layers"][0]["smallest_bytes"], 64);
}

TEST_F(Audit, BadInputNamesTheFile) {
  fs::create_directory(dir_ / "bad");
  std::ofstream(dir_ / "bad" / "layer.smtx") << "4, 4, 2\n0 1 2 2 2\n0 9\n";
  fs::create_directory(dir_ / "empty");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"nothing_here"}, "nothing_here: no such file or directory"},
      {{"bad"}, "layer.smtx"},
      {{"empty"}, "empty: no weight matrix to audit (0 tensors, 0 skipped)"},
      {{"bad", "--batch", "0"}, "--batch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    ToolResult r = run("sparseflow-audit", c.args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

/// A .safetensors file of plain arrays written here: (name, dtype, shape, raw bytes).
struct RawArray {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::string checkpointOf(const std::vector<RawArray>& arrays) {
  Json header = Json::object();
  std::string data;
  for (const RawArray& a : arrays) {
    header[a.name] = {{"dtype", a.dtype},
                      {"shape", a.shape},
                      {"data_offsets", {data.size(), data.size() + a.bytes.size()}}};
    data += a.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[static_cast<size_t>(i)] = static_cast<char>(text.size() >> (8 * i));
  return file + text + data;
}

/// `count` bf16 values (the upper halves of f32), deterministic, mostly nonzero.
std::string bf16Bytes(int64_t count) {
  std::string bytes;
  for (int64_t i = 0; i < count; ++i) {
    const float f = static_cast<float>((i * 37) % 11) - 5.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bytes += static_cast<char>((bits >> 16) & 0xff);
    bytes += static_cast<char>(bits >> 24);
  }
  return bytes;
}

TEST_F(Audit, TimesAreRobustAndTheJsonSaysHowTheyWereTaken) {
  fs::create_directory(dir_ / "w");
  fs::copy_file(kRn50 + "/" + kLayers[0] + ".smtx", dir_ / "w" / (kLayers[0] + ".smtx"));
  ToolResult r = run("sparseflow-audit", {"w", "--json", "--runs", "3", "--batch", "1", "--formats",
                                          "csr", "--min-time-ms", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(r.out);
  // docs/tools.md promises the load average: at the start and at the end.
  EXPECT_GE(j["machine"]["load_average"].get<double>(), 0);
  EXPECT_GE(j["machine"]["load_average_at_end"].get<double>(), 0);
  EXPECT_EQ(j["min_time_ms"], 2.0);
  const Json& t = j["layers"][0]["timings"][0];
  EXPECT_GE(t["rounds"].get<int>(), 3) << "at least --runs rounds";
  EXPECT_LE(t["rounds"].get<int>(), 9) << "at most 3 x --runs rounds";
  EXPECT_GE(t["attempts"].get<int>(), 1);
  EXPECT_LE(t["attempts"].get<int>(), 2);
  for (const Json& range :
       {t["spread_ms"]["dense"], t["spread_ms"]["nm_2_4"], t["spread_ms"]["formats"]["csr"],
        t["speedup_range"]["nm_2_4"], t["speedup_range"]["csr"]}) {
    ASSERT_EQ(range.size(), 2u);
    EXPECT_GT(range[0].get<double>(), 0);
    EXPECT_LE(range[0].get<double>(), range[1].get<double>());
  }
  // The median lies within its own quartiles.
  EXPECT_LE(t["spread_ms"]["dense"][0].get<double>(), t["dense_ms"].get<double>());
  EXPECT_GE(t["spread_ms"]["dense"][1].get<double>(), t["dense_ms"].get<double>());
  EXPECT_TRUE(t["noisy"].is_array());
  EXPECT_NE(j["assumptions"].dump().find("rotating order"), std::string::npos);
}

TEST_F(Audit, QuickTimingTakesTwoRoundsAndSaysSo) {
  // SPARSEFLOW_QUICK_TIMING=1 (the docs tests' smoke runs): two rounds, no minimum time, one
  // attempt, whatever the options say; the JSON records it and stderr says so.
  fs::create_directory(dir_ / "w");
  fs::copy_file(kRn50 + "/" + kLayers[0] + ".smtx", dir_ / "w" / (kLayers[0] + ".smtx"));
  ASSERT_EQ(setenv("SPARSEFLOW_QUICK_TIMING", "1", 1), 0);
  ToolResult r = run("sparseflow-audit", {"w", "--json", "--runs", "7", "--batch", "1", "--formats",
                                          "csr", "--min-time-ms", "50"});
  unsetenv("SPARSEFLOW_QUICK_TIMING");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("SPARSEFLOW_QUICK_TIMING is set"), std::string::npos) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["runs"], 2);
  EXPECT_EQ(j["min_time_ms"], 0.0);
  const Json& t = j["layers"][0]["timings"][0];
  EXPECT_GE(t["rounds"].get<int>(), 2);
  EXPECT_LE(t["rounds"].get<int>(), 6) << "at most 3 x 2 rounds";
  EXPECT_EQ(t["attempts"], 1);
}

TEST_F(Audit, Bf16WeightsAreTimedInBf16AndEmbeddingTablesAreNotLayers) {
  const int64_t rows = 64, cols = 96;
  std::ofstream(path("m.safetensors"), std::ios::binary) << checkpointOf({
      {"transformer.wte.weight", "BF16", {128, cols}, bf16Bytes(128 * cols)},
      {"h.0.mlp.c_fc.weight", "BF16", {rows, cols}, bf16Bytes(rows * cols)},
  });
  ToolResult r = run("sparseflow-audit", {"m.safetensors", "--json", "--runs", "2", "--batch", "1",
                                          "--formats", "csr", "--min-time-ms", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["layers"].size(), 1u) << "the embedding table is not a linear layer";
  const Json& l = j["layers"][0];
  EXPECT_EQ(l["name"], "h.0.mlp.c_fc.weight");
  EXPECT_EQ(l["dtype"], "bf16");
  EXPECT_EQ(l["timed_dtype"], "bf16");
  EXPECT_EQ(l["bytes"]["dense"].get<int64_t>(), rows * cols * 2) << "bf16 values";
  EXPECT_LT(l["output_error_exact"].get<double>(), 1e-5);
  r = run("sparseflow-audit", {"m.safetensors", "--runs", "2", "--batch", "1", "--formats", "csr",
                               "--min-time-ms", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not audited: transformer.wte.weight (embedding table (a lookup by index, "
                       "not a linear layer))"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace sparseflow
