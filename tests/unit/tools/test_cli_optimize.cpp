// `sparseflow optimize` as a user runs it: the Graph Challenge sparse DNN from its files to the
// expected categories, the written model read back to the same output, and bad arguments named.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "sparseflow/build.h"
#include "sparseflow/io.h"
#include "unit/tools/tool_process.h"

namespace {

namespace fs = std::filesystem;

const std::string kDnn = std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/dnn_data";

class CliOptimize : public sparseflow::testing::ToolTest {
 protected:
  sparseflow::testing::ToolResult optimize(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"optimize"};
    all.insert(all.end(), args.begin(), args.end());
    return run("sparseflow", all);
  }
};

std::set<int64_t> nonzeroRows(const fs::path& file) {
  const sparseflow::Coo coo = sparseflow::toCoo(sparseflow::read(file.string()));
  std::set<int64_t> rows;
  for (int64_t e = 0; e < coo.numEntries(); ++e) {
    if (coo.values[static_cast<size_t>(e)] != 0)
      rows.insert(coo.coords[static_cast<size_t>(2 * e)]);
  }
  return rows;
}

TEST_F(CliOptimize, GraphChallengeDnnGivesTheExpectedCategoriesAndReadsBack) {
  const auto r = optimize({kDnn, "--graph-challenge", "--layers", "30", "--rows", "1200", "--rule",
                           "-o", "out", "--input", "Y0=" + kDnn + "/sparse-images-1024_subset.mtx",
                           "--output", "y.mtx", "--repeat", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("matmul %4 + bias_add %5 + relu %6 + minimum %7"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("csr_spmm"), std::string::npos);
  EXPECT_NE(r.out.find("ms per inference"), std::string::npos);
  const std::set<int64_t> expected = nonzeroRows(kDnn + "/neuron1024-l120-categories_subset.mtx");
  EXPECT_EQ(expected.size(), 19u);
  EXPECT_EQ(nonzeroRows(dir_ / "y.mtx"), expected);
  // The written model runs again from its files, to the same output.
  const auto again =
      optimize({(dir_ / "out/model.sfg").string(), "--weights",
                (dir_ / "out/weights.safetensors").string(), "--rule", "-o", "out2", "--input",
                "Y0=" + kDnn + "/sparse-images-1024_subset.mtx", "--output", "y2.mtx"});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(sparseflow::testing::slurpFile(dir_ / "y.mtx"),
            sparseflow::testing::slurpFile(dir_ / "y2.mtx"));
}

TEST_F(CliOptimize, BadArgumentsAreNamed) {
  auto r = optimize({kDnn + "/n1024-l1.mtx", "-o", "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("needs --weights"), std::string::npos) << r.err;
  r = optimize({kDnn, "--graph-challenge", "--layers", "31", "-o", "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("n1024-l31.mtx is missing"), std::string::npos) << r.err;
  r = optimize(
      {kDnn, "--graph-challenge", "--layers", "2", "--rule", "--format", "W9=csr", "-o", "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("\"W9\", which is not the weight of a linear layer"), std::string::npos)
      << r.err;
  // A graph whose parameter the checkpoint lacks: the error names both.
  ASSERT_EQ(optimize({kDnn, "--graph-challenge", "--layers", "1", "--rule", "-o", "one"}).status,
            0);
  sparseflow::testing::ToolResult bad;
  {
    std::string text = sparseflow::testing::slurpFile(dir_ / "one/model.sfg");
    const size_t at = text.find("\"W1\"");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 4, "\"Wx\"");
    std::ofstream(dir_ / "renamed.sfg") << text;
  }
  bad = optimize({(dir_ / "renamed.sfg").string(), "--weights",
                  (dir_ / "one/weights.safetensors").string(), "-o", "out3"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("no tensor \"Wx\""), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "out3"));
}

// An ONNX file (the bundled torch export of an MLP, input x f32[2, 6]) runs from the file with its
// weights named as in torch; the shape flags' mistakes are named (the same model against torch
// through this command: tests/python/test_onnx.py).
TEST_F(CliOptimize, OnnxModelRunsAndItsShapeMistakesAreNamed) {
  const std::string model = std::string(SPARSEFLOW_DATA_DIR) + "/onnx/mlp_gelu.onnx";
  std::vector<double> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * static_cast<double>(i) - 1.0;
  sparseflow::write((dir_ / "x.npy").string(),
                    sparseflow::fromDense({2, 6}, x.data(), sparseflow::Format::parse("dense", 2)));
  auto r = optimize({model, "--rule", "-o", "out", "--input", "x=" + (dir_ / "x.npy").string(),
                     "--output", "y.npy"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("a.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gelu"), std::string::npos) << r.out;
  EXPECT_EQ(sparseflow::read((dir_ / "y.npy").string()).shape(), (std::vector<int64_t>{2, 3}));
  r = optimize({model, "--shape", "x=2xq", "-o", "bad1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--shape x=2xq: extents are positive integers joined by x"),
            std::string::npos)
      << r.err;
  r = optimize({model, "--shape", "x=3x6", "-o", "bad2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("extent 0 is 2 in the model, 3 as given"), std::string::npos) << r.err;
  r = optimize({model, "--shape", "y=1", "-o", "bad3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("has no input \"y\""), std::string::npos) << r.err;
  r = optimize({model, "--weights", model, "-o", "bad4"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("an ONNX model carries its weights"), std::string::npos) << r.err;
  // Integers float32 does not hold exactly (the executor's values are float32) are refused.
  std::vector<double> ids(12, 3.0);
  ids[5] = 16777217.0;
  sparseflow::write((dir_ / "ids.npy").string(),
                    sparseflow::fromDense({2, 6}, ids.data(), sparseflow::Format::parse("dense", 2),
                                          sparseflow::DType::kF64));
  r = optimize({model, "--rule", "-o", "bad5", "--input", "x=" + (dir_ / "ids.npy").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("the integer 16777217 does not fit float32 exactly"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ids.npy"), std::string::npos) << r.err;
  for (const char* out : {"bad1", "bad2", "bad3", "bad4", "bad5"}) {
    EXPECT_FALSE(fs::exists(dir_ / out));
  }
}

}  // namespace
