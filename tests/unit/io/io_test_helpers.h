// Helpers shared by the reader/writer tests: data paths, error expectations, tensor comparison.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "io/raw_tensor.h"
#include "sparseflow/error.h"

namespace sparseflow::io::testing {

/// Absolute path of a file under data/.
inline std::string dataPath(std::string_view relative) {
  std::string path = SPARSEFLOW_DATA_DIR;  // appended, not `+`: GCC 12 warns falsely there
  path += '/';
  path += relative;
  return path;
}

/// Paths (relative to data/, sorted) of every file under data/ whose extension is `extension`.
inline std::vector<std::string> dataFilesWithExtension(std::string_view extension) {
  std::vector<std::string> out;
  std::filesystem::path root(SPARSEFLOW_DATA_DIR);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == extension) {
      out.push_back(std::filesystem::relative(entry.path(), root).string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Runs `body`, expects a sparseflow::Error with `code` whose message contains every needle, and
/// returns the message ("" if nothing was thrown).
template <typename Body>
std::string expectError(Body&& body, ErrorCode code,
                        std::initializer_list<std::string_view> needles) {
  try {
    body();
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code))
        << "code " << errorCodeName(e.code()) << " for: " << message;
    for (std::string_view needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos)
          << "message lacks '" << needle << "': " << message;
    }
    return message;
  }
  ADD_FAILURE() << "expected an error containing '" << (needles.size() > 0 ? *needles.begin() : "")
                << "'";
  return "";
}

/// A malformed text, the error code it must give and fragments its message must hold.
struct BadText {
  std::string text;
  ErrorCode code;
  std::vector<std::string> needles;
};

/// Runs `parse(text)` on each case and expects its error.
template <typename Parse>
void expectBadTexts(const std::vector<BadText>& cases, Parse&& parse) {
  for (const BadText& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse(c.text);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      std::string message = e.what();
      EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(c.code)) << message;
      for (const std::string& needle : c.needles) {
        EXPECT_NE(message.find(needle), std::string::npos)
            << "lacks '" << needle << "': " << message;
      }
    }
  }
}

/// Values equal bit for bit, except that any two NaNs match (their payloads need not survive text).
inline bool sameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

/// Expects two RawTensors to be identical (shape, flags, coordinates, values).
inline void expectSameTensor(const RawTensor& expected, const RawTensor& actual) {
  EXPECT_EQ(expected.shape, actual.shape);
  EXPECT_EQ(expected.dense, actual.dense);
  EXPECT_EQ(expected.pattern, actual.pattern);
  EXPECT_EQ(expected.coords, actual.coords);
  ASSERT_EQ(expected.values.size(), actual.values.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < expected.values.size(); ++i) {
    if (!sameValue(expected.values[i], actual.values[i]) && ++mismatches <= 5) {
      ADD_FAILURE() << "value " << i << ": expected " << expected.values[i] << ", got "
                    << actual.values[i];
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

/// A sparse RawTensor (designated initializers would trip -Wmissing-field-initializers).
inline RawTensor sparseTensor(std::vector<int64_t> shape, std::vector<int64_t> coords,
                              std::vector<double> values) {
  RawTensor t;
  t.shape = std::move(shape);
  t.coords = std::move(coords);
  t.values = std::move(values);
  return t;
}

/// A sparse RawTensor without values.
inline RawTensor patternTensor(std::vector<int64_t> shape, std::vector<int64_t> coords) {
  RawTensor t = sparseTensor(std::move(shape), std::move(coords), {});
  t.pattern = true;
  return t;
}

/// A dense row-major RawTensor.
inline RawTensor denseTensor(std::vector<int64_t> shape, std::vector<double> values) {
  RawTensor t = sparseTensor(std::move(shape), {}, std::move(values));
  t.dense = true;
  return t;
}

/// A scratch directory under the system temporary directory, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("sparseflow_io_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(std::string_view name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sparseflow::io::testing
