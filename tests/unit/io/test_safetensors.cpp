// .safetensors: files written by hand read back; every format round-trips through the writer and
// the compressed layout; malformed headers give their named errors; writes are atomic.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "sparseflow/build.h"
#include "sparseflow/checkpoint.h"
#include "sparseflow/convert.h"
#include "sparseflow/error.h"
#include "sparseflow/io.h"

namespace sparseflow {
namespace {

namespace fs = std::filesystem;

const std::string kWest =
    std::string(SPARSEFLOW_DATA_DIR) + "/suitesparse/LAGraph/data/west0067.mtx";

/// A .safetensors file built by hand: `header` is the JSON text, `data` the buffer.
std::string handMade(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

template <typename T>
std::string bytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/sparseflow-st-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void put(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  fs::path dir_;
};

using Safetensors = TempDir;

TEST_F(Safetensors, ReadsAFileWrittenByHand) {
  // F32 2x3, then I64 [2], as the reference writer lays them out (header padded to 8 bytes).
  std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("step":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::vector<float> w{1, -2, 0, 0, 3.5f, 0};
  const std::vector<int64_t> step{7, 1ll << 40};
  put("hand.safetensors", handMade(header, bytesOf(w) + bytesOf(step)));

  Checkpoint c = Checkpoint::open(path("hand.safetensors"));
  ASSERT_EQ(c.entries().size(), 2u);
  EXPECT_EQ(c.entries()[0].name, "w");
  EXPECT_EQ(c.entries()[0].format, "dense");
  EXPECT_EQ(c.entries()[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(c.entries()[0].readable());
  EXPECT_EQ(c.entries()[1].name, "step");
  EXPECT_EQ(c.entries()[1].dtype, "I64");
  EXPECT_FALSE(c.entries()[1].readable());
  EXPECT_EQ(c.metadata().at("format"), "pt");
  EXPECT_EQ(c.arrayBytes("step"), bytesOf(step));

  Tensor t = c.tensor("w");
  EXPECT_EQ(t.dtype(), DType::kF32);
  EXPECT_EQ(toDense(t), (std::vector<double>{1, -2, 0, 0, 3.5, 0}));
  try {
    c.tensor("step");
    FAIL() << "an I64 tensor has no sparseflow values";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
    EXPECT_NE(std::string(e.what()).find("tensor 'step' has dtype I64"), std::string::npos);
  }
  // read() takes one tensor by name, and refuses to guess when there are several.
  ReadOptions options;
  options.tensor = "w";
  options.format = "csr";
  Tensor csr = read(path("hand.safetensors"), options);
  EXPECT_EQ(csr.format().toString(), "csr");
  EXPECT_EQ(csr.numStored(), 3);
  try {
    read(path("hand.safetensors"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hand.safetensors: holds 2 tensors; name the one to read "
                                         "(w, step)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Safetensors, HalfTypesKeepTheirBits) {
  // F16 1.0 = 0x3c00, -2.0 = 0xc000; BF16 1.0 = 0x3f80, 0.5 = 0x3f00.
  const std::vector<uint16_t> f16{0x3c00, 0xc000}, bf16{0x3f80, 0x3f00};
  std::string header = R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                       R"("b":{"dtype":"BF16","shape":[1,2],"data_offsets":[4,8]}})";
  put("half.safetensors", handMade(header, bytesOf(f16) + bytesOf(bf16)));
  Checkpoint c = Checkpoint::open(path("half.safetensors"));
  Tensor a = c.tensor("a"), b = c.tensor("b");
  EXPECT_EQ(a.dtype(), DType::kF16);
  EXPECT_EQ(b.dtype(), DType::kBF16);
  EXPECT_EQ(toDense(a), (std::vector<double>{1, -2}));
  EXPECT_EQ(toDense(b), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(std::memcmp(b.values().data(), bf16.data(), 4), 0);
}

/// Every array of two plain tensors is identical (dtype, size and bytes).
void expectSameArrays(const Tensor& a, const Tensor& b) {
  auto same = [](const Buffer& x, const Buffer& y, const std::string& what) {
    ASSERT_EQ(x.dtype(), y.dtype()) << what;
    ASSERT_EQ(x.size(), y.size()) << what;
    if (x.bytes() == 0) return;  // absent arrays: no pointer to compare (memcmp needs non-null)
    EXPECT_EQ(std::memcmp(x.data(), y.data(), static_cast<size_t>(x.bytes())), 0) << what;
  };
  same(a.values(), b.values(), "values");
  ASSERT_EQ(a.levels().size(), b.levels().size());
  for (int32_t l = 0; l < a.format().numLevels(); ++l) {
    same(a.level(l).pos, b.level(l).pos, "pos of level " + std::to_string(l));
    same(a.level(l).crd, b.level(l).crd, "crd of level " + std::to_string(l));
    same(a.level(l).meta, b.level(l).meta, "meta of level " + std::to_string(l));
  }
}

TEST_F(Safetensors, EveryFormatRoundTripsOnARealMatrix) {
  const Tensor west = read(kWest);  // 67x67, 294 entries
  const std::vector<double> dense = toDense(west);
  // 2:4 needs a matrix that fits: keep the two largest of every four columns.
  std::vector<double> nm = dense;
  for (size_t r = 0; r < 67; ++r) {
    for (size_t g = 0; g < 67; g += 4) {
      std::vector<size_t> cols;
      for (size_t c = g; c < std::min<size_t>(g + 4, 67); ++c) cols.push_back(r * 67 + c);
      std::sort(cols.begin(), cols.end(),
                [&](size_t x, size_t y) { return std::abs(nm[x]) > std::abs(nm[y]); });
      for (size_t k = 2; k < cols.size(); ++k) nm[cols[k]] = 0;
    }
  }
  const Tensor nmDense = fromDense({67, 67}, nm.data(), Format::parse("dense", 2));
  CheckpointWriter writer;
  std::vector<std::pair<std::string, Tensor>> written;
  for (const char* format : {"dense", "csr", "csc", "coo", "dcsr", "bsr:4x4", "ell", "hyb",
                             "csr@i64", "levels[d0:dense, d1:compressed(nu)]"}) {
    written.emplace_back(std::string("m.") + format, convert(west, format));
  }
  written.emplace_back("m.2:4", convert(nmDense, "2:4"));
  written.emplace_back(
      "m.bf16", convert(west, Format::parse("csr", 2), ConvertOptions{true, DType::kBF16, false}));
  for (const auto& [name, tensor] : written) writer.add(name, tensor);
  writer.setMetadata("source", "west0067");
  writer.write(path("all.safetensors"));

  Checkpoint c = Checkpoint::open(path("all.safetensors"));
  EXPECT_EQ(c.metadata().size(), 1u) << "the layout record is not user metadata";
  EXPECT_EQ(c.metadata().at("source"), "west0067");
  ASSERT_EQ(c.entries().size(), written.size());
  for (const auto& [name, tensor] : written) {
    SCOPED_TRACE(name);
    const CheckpointEntry& e = c.entry(name);
    EXPECT_EQ(e.format, tensor.format().toString());
    EXPECT_EQ(e.shape, tensor.shape());
    Tensor back = c.tensor(name);
    EXPECT_EQ(back.format(), tensor.format());
    EXPECT_EQ(back.dtype(), tensor.dtype());
    if (tensor.isHybrid()) {
      ASSERT_EQ(back.parts().size(), tensor.parts().size());
      for (size_t p = 0; p < tensor.parts().size(); ++p) {
        expectSameArrays(back.parts()[p], tensor.parts()[p]);
      }
    } else {
      expectSameArrays(back, tensor);
    }
    EXPECT_EQ(toDense(back), toDense(tensor));
  }
  // The 2:4 tensor is two arrays named by the layout, with the record in __metadata__.
  EXPECT_EQ(c.entry("m.2:4").arrays,
            (std::vector<std::string>{"m.2:4.level1.meta", "m.2:4.values"}));
  EXPECT_EQ(c.entry("m.csr").arrays,
            (std::vector<std::string>{"m.csr.level1.pos", "m.csr.level1.crd", "m.csr.values"}));
  EXPECT_EQ(c.entry("m.hyb").arrays.front().rfind("m.hyb.part0.", 0), 0u);
  EXPECT_EQ(c.entry("m.dense").arrays, (std::vector<std::string>{"m.dense"}));

  // The file obeys the format's own rules, checked without sparseflow's reader: 8-byte aligned
  // header, arrays aligned to their element size, a record any JSON reader parses.
  std::ifstream in(path("all.safetensors"), std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  auto header = nlohmann::json::parse(file.substr(8, n));
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") continue;
    const int64_t size = io::safetensorsDTypeSize(value["dtype"].get<std::string>());
    EXPECT_EQ(value["data_offsets"][0].get<uint64_t>() % static_cast<uint64_t>(size), 0u) << key;
  }
  auto record = nlohmann::json::parse(header["__metadata__"]["sparseflow"].get<std::string>());
  EXPECT_EQ(record["version"], 1);
  EXPECT_EQ(record["tensors"]["m.2:4"]["format"], "2:4");
  EXPECT_EQ(record["tensors"]["m.2:4"]["shape"], nlohmann::json::array({67, 67}));
  EXPECT_EQ(record["tensors"]["m.bf16"]["dtype"], "BF16");
}

TEST_F(Safetensors, WriteAndReadThroughTheFileKindDispatch) {
  const Tensor west = read(kWest);
  write(path("w.safetensors"), convert(west, "bsr:2x2"));
  EXPECT_EQ(fileKindFromPath(path("w.safetensors")), FileKind::kSafetensors);
  Tensor back = read(path("w.safetensors"));  // the only tensor, named "tensor", as f32
  EXPECT_EQ(back.format().toString(), "bsr:2x2");
  EXPECT_EQ(toDense(back), toDense(west));
  WriteOptions named;
  named.tensor = "layer.weight";
  write(path("n.safetensors"), west, named);
  EXPECT_TRUE(Checkpoint::open(path("n.safetensors")).contains("layer.weight"));
  Coo coo = readCoo(path("n.safetensors"));
  EXPECT_EQ(coo.numEntries(), 294);
}

TEST_F(Safetensors, CopyKeepsAnyDTypeAndLayoutByteForByte) {
  std::string header = R"({"ids":{"dtype":"I64","shape":[3],"data_offsets":[0,24]},)"
                       R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[24,27]},)"
                       R"("q":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[27,29]}})";
  const std::vector<int64_t> ids{1, 2, 3};
  put("src.safetensors", handMade(header, bytesOf(ids) + std::string("\1\0\1", 3) + "\x38\xb8"));
  CheckpointWriter first;
  first.add("w", convert(read(kWest), "csr"));
  first.write(path("w.safetensors"));

  Checkpoint src = Checkpoint::open(path("src.safetensors"));
  Checkpoint w = Checkpoint::open(path("w.safetensors"));
  CheckpointWriter writer;
  for (const CheckpointEntry& e : src.entries()) writer.copy(src, e.name);
  writer.copy(w, "w");
  writer.write(path("out.safetensors"));
  Checkpoint out = Checkpoint::open(path("out.safetensors"));
  for (const CheckpointEntry& e : src.entries()) {
    EXPECT_EQ(out.entry(e.name).dtype, e.dtype);
    EXPECT_EQ(out.entry(e.name).shape, e.shape);
    EXPECT_EQ(out.arrayBytes(e.name), src.arrayBytes(e.name));
  }
  EXPECT_EQ(out.entry("w").format, "csr");
  EXPECT_EQ(toDense(out.tensor("w")), toDense(read(kWest)));
}

TEST_F(Safetensors, WriterRefusesNameClashes) {
  const Tensor west = read(kWest);
  CheckpointWriter writer;
  writer.add("w", west);
  EXPECT_THROW(writer.add("w", west), Error);
  writer.add("x.values", convert(west, "dense"));
  try {
    writer.add("x", west);  // csr: x.level1.pos, x.level1.crd, x.values
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the name 'x.values' (of tensor 'x') is already taken"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(writer.setMetadata("sparseflow", "{}"), Error);
  EXPECT_THROW(writer.add("", west), Error);
}

TEST_F(Safetensors, WritesAreAtomic) {
  const Tensor west = read(kWest);
  write(path("w.safetensors"), west);
  const auto before = fs::file_size(path("w.safetensors"));
  // A failed write (no such directory) leaves nothing; a good one replaces the old file whole.
  EXPECT_THROW(write(path("missing/w.safetensors"), west), Error);
  write(path("w.safetensors"), convert(west, "coo"));
  EXPECT_NE(fs::file_size(path("w.safetensors")), before);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
  EXPECT_EQ(names, (std::vector<std::string>{"w.safetensors"})) << "no temporary file is left";
}

/// The error `bytes` give when parsed as a checkpoint (empty if none).
std::string errorOf(const std::string& bytes, ErrorCode* code = nullptr) {
  try {
    Checkpoint c = Checkpoint::parse(bytes, "bad.safetensors");
    for (const CheckpointEntry& e : c.entries()) c.tensor(e.name);
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

struct BadCase {
  const char* what;
  std::string bytes;
  const char* message;
};

TEST(SafetensorsErrors, MalformedFilesAreRefusedWithTheirReason) {
  const std::string f3(12, '\0');  // three F32 zeros
  auto one = [](const std::string& info) { return "{\"a\":" + info + "}"; };
  std::string huge(8, '\0');
  huge[5] = 1;  // 2^40
  const std::vector<BadCase> cases = {
      {"too short", "abc", "file of 3 bytes is too short"},
      {"huge header", huge + "{}", "is over the limit of 100000000 bytes"},
      {"header past the end", handMade("{}", "").substr(0, 9), "runs past the end of the file"},
      {"not an object", handMade("[1]", ""), "does not start with '{'"},
      {"bad JSON", handMade("{\"a\":", ""), "header is not valid JSON"},
      {"duplicate", handMade(R"({"a":{},"a":{}})", ""), "header names 'a' twice"},
      {"deep", handMade("{\"a\":" + std::string(20, '[') + std::string(20, ']') + "}", ""),
       "nests objects or arrays more than 8 deep"},
      {"not an object entry", handMade(one("3"), ""), "tensor 'a' must be an object"},
      {"no dtype", handMade(one(R"({"shape":[],"data_offsets":[0,0]})"), ""),
       "tensor 'a' has no \"dtype\""},
      {"unknown dtype", handMade(one(R"({"dtype":"Q7","shape":[3],"data_offsets":[0,12]})"), f3),
       "tensor 'a': dtype 'Q7' is not supported (BOOL, U8"},
      {"negative shape", handMade(one(R"({"dtype":"F32","shape":[-3],"data_offsets":[0,12]})"), f3),
       "a shape entry must be a non-negative integer, not -3"},
      {"float offset", handMade(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,12.0]})"), f3),
       "data_offsets end must be a non-negative integer"},
      {"offsets shape", handMade(one(R"({"dtype":"F32","shape":[3],"data_offsets":[12]})"), f3),
       "data_offsets must be [begin, end]"},
      {"reversed", handMade(one(R"({"dtype":"F32","shape":[0],"data_offsets":[12,0]})"), f3),
       "data_offsets [12, 0] end before they begin"},
      {"out of range", handMade(one(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), f3),
       "data_offsets [0, 16] run past the end of the 12-byte data buffer"},
      {"size mismatch", handMade(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,12]})"), f3),
       "data_offsets [0, 12] hold 12 bytes but F32 [2] needs 8"},
      {"overflowing shape",
       handMade(one(R"({"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,12]})"),
                f3),
       "needs more than 2^64"},
      {"overlap",
       handMade(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                f3),
       "tensors 'a' [0, 8) and 'b' [4, 12) overlap"},
      {"hole",
       handMade(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                f3),
       "bytes [4, 8) of the data buffer belong to no tensor"},
      {"trailing bytes", handMade(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), f3),
       "the data buffer holds 12 bytes but the tensors end at byte 8"},
      {"metadata value", handMade(R"({"__metadata__":{"k":1}})", ""),
       "__metadata__ 'k' must be a string, not 1"},
      {"layout JSON", handMade(R"({"__metadata__":{"sparseflow":"{"}})", ""),
       "__metadata__ \"sparseflow\" is not valid JSON"},
      {"layout version",
       handMade(R"({"__metadata__":{"sparseflow":"{\"version\":9,\"tensors\":{}}"}})", ""),
       "sparseflow layout version 9 is not supported"},
      {"missing array",
       handMade(R"({"__metadata__":{"sparseflow":"{\"version\":1,\"tensors\":{\"w\":)"
                R"({\"format\":\"csr\",\"shape\":[1,3],\"dtype\":\"F32\"}}}"},)"
                R"("w.values":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})",
                f3),
       "compressed tensor 'w' (csr) lacks its array 'w.level1.pos'"},
      {"wrong array dtype",
       handMade(R"({"__metadata__":{"sparseflow":"{\"version\":1,\"tensors\":{\"w\":)"
                R"({\"format\":\"2:4\",\"shape\":[1,4],\"dtype\":\"F32\"}}}"},)"
                R"("w.values":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("w.level1.meta":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                f3),
       "array 'w.level1.meta' must be 1-d U8, not F32 of rank 1"},
      {"bad format",
       handMade(R"({"__metadata__":{"sparseflow":"{\"version\":1,\"tensors\":{\"w\":)"
                R"({\"format\":\"zzz\",\"shape\":[1,4],\"dtype\":\"F32\"}}}"}})",
                ""),
       "compressed tensor 'w': "},
      {"broken csr",
       handMade(R"({"__metadata__":{"sparseflow":"{\"version\":1,\"tensors\":{\"w\":)"
                R"({\"format\":\"csr\",\"shape\":[1,3],\"dtype\":\"F32\"}}}"},)"
                R"("w.values":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("w.level1.pos":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},)"
                R"("w.level1.crd":{"dtype":"I32","shape":[1],"data_offsets":[8,12]}})",
                f3),
       "bad.safetensors: tensor 'w': "},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    ErrorCode code = ErrorCode::kOk;
    const std::string message = errorOf(c.bytes, &code);
    ASSERT_FALSE(message.empty()) << "accepted";
    EXPECT_EQ(message.rfind("bad.safetensors: ", 0), 0u) << "names the file: " << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_NE(code, ErrorCode::kInternal) << message;
  }
}

TEST(SafetensorsErrors, ReadingAMissingFileNamesIt) {
  try {
    Checkpoint::open("/nonexistent/x.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.safetensors"), std::string::npos);
  }
}

TEST(SafetensorsErrors, ZeroSizedAndEmptyFilesAreFine) {
  // No tensors at all, and zero-element tensors sharing an offset, are valid files.
  EXPECT_EQ(errorOf(handMade("{}", "")), "");
  EXPECT_EQ(errorOf(handMade(R"({"a":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},)"
                             R"("b":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}})",
                             "")),
            "");
  Checkpoint c = Checkpoint::parse(handMade(R"({"a":{"dtype":"F32","shape":[0,3],)"
                                            R"("data_offsets":[0,0]}})",
                                            ""),
                                   "z");
  EXPECT_EQ(c.tensor("a").shape(), (std::vector<int64_t>{0, 3}));
}

}  // namespace
}  // namespace sparseflow
