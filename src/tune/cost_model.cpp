// The XGBoost ranker (cost_model.h) through XGBoost's C API: every call's status checked and its
// message (XGBGetLastError) passed on.
#include "tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/check.h"

namespace sparseflow::tune {
namespace {

/// Throws kInternal with XGBoost's message when a C API call failed.
void xgb(int status, const char* call) {
  SF_CHECK_CODE(status == 0, ErrorCode::kInternal)
      << "XGBoost " << call << " failed: " << XGBGetLastError();
}

constexpr const char* kNamesAttribute = "sparseflow_features";

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "\n") + n;
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// A dense DMatrix of `rows` (float, NaN missing), freed with its owner.
struct Matrix {
  DMatrixHandle handle = nullptr;
  Matrix(const std::vector<std::vector<double>>& rows, size_t columns) {
    std::vector<float> data;
    data.reserve(rows.size() * columns);
    for (const std::vector<double>& row : rows) {
      SF_USER_CHECK(row.size() == columns) << "a feature row has " << row.size()
                                           << " values; the model has " << columns << " features";
      for (double v : row) data.push_back(static_cast<float>(v));
    }
    xgb(XGDMatrixCreateFromMat(data.data(), rows.size(), columns,
                               std::numeric_limits<float>::quiet_NaN(), &handle),
        "XGDMatrixCreateFromMat");
  }
  ~Matrix() {
    if (handle) XGDMatrixFree(handle);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

}  // namespace

struct CostModel::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }
};

CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;
CostModel::~CostModel() = default;

float CostModel::relevance(double ms, double best) {
  if (!(ms > 0) || !(best > 0)) return 0;
  const double octaves = std::log2(ms / best);
  return static_cast<float>(std::clamp(15.0 - std::floor(4 * octaves + 1e-9), 0.0, 15.0));
}

CostModel CostModel::train(const std::vector<std::string>& featureNames,
                           const std::vector<RankGroup>& groups, const TrainOptions& options) {
  std::vector<std::vector<double>> rows;
  std::vector<float> labels;
  std::vector<unsigned> sizes;
  for (const RankGroup& g : groups) {
    SF_USER_CHECK(g.rows.size() == g.milliseconds.size())
        << "a group has " << g.rows.size() << " rows and " << g.milliseconds.size() << " times";
    if (g.rows.size() < 2) continue;  // nothing to rank
    const double best = *std::min_element(g.milliseconds.begin(), g.milliseconds.end());
    for (size_t k = 0; k < g.rows.size(); ++k) {
      rows.push_back(g.rows[k]);
      labels.push_back(relevance(g.milliseconds[k], best));
    }
    sizes.push_back(static_cast<unsigned>(g.rows.size()));
  }
  SF_USER_CHECK(!sizes.empty()) << "no group with two or more timed configurations to learn from";
  Matrix train(rows, featureNames.size());
  xgb(XGDMatrixSetFloatInfo(train.handle, "label", labels.data(), labels.size()),
      "XGDMatrixSetFloatInfo");
  xgb(XGDMatrixSetUIntInfo(train.handle, "group", sizes.data(), sizes.size()),
      "XGDMatrixSetUIntInfo");
  CostModel model;
  model.names_ = featureNames;
  model.booster_ = std::make_unique<Booster>();
  xgb(XGBoosterCreate(&train.handle, 1, &model.booster_->handle), "XGBoosterCreate");
  const std::vector<std::pair<std::string, std::string>> params = {
      {"objective", "rank:pairwise"},
      {"eta", std::to_string(options.learningRate)},
      {"max_depth", std::to_string(options.maxDepth)},
      {"nthread", std::to_string(options.threads)},
      {"seed", std::to_string(options.seed)},
      {"verbosity", "0"}};
  for (const auto& [key, value] : params)
    xgb(XGBoosterSetParam(model.booster_->handle, key.c_str(), value.c_str()), "XGBoosterSetParam");
  for (int round = 0; round < options.rounds; ++round)
    xgb(XGBoosterUpdateOneIter(model.booster_->handle, round, train.handle),
        "XGBoosterUpdateOneIter");
  xgb(XGBoosterSetAttr(model.booster_->handle, kNamesAttribute, joined(featureNames).c_str()),
      "XGBoosterSetAttr");
  return model;
}

CostModel CostModel::load(const std::string& path) {
  CostModel model;
  model.booster_ = std::make_unique<Booster>();
  xgb(XGBoosterCreate(nullptr, 0, &model.booster_->handle), "XGBoosterCreate");
  SF_USER_CHECK(XGBoosterLoadModel(model.booster_->handle, path.c_str()) == 0)
      << "cannot read the cost model '" << path << "': " << XGBGetLastError();
  const char* names = nullptr;
  int found = 0;
  xgb(XGBoosterGetAttr(model.booster_->handle, kNamesAttribute, &names, &found),
      "XGBoosterGetAttr");
  SF_USER_CHECK(found != 0 && names != nullptr)
      << "'" << path << "' is an XGBoost model without sparseflow's feature names";
  model.names_ = split(names);
  return model;
}

void CostModel::save(const std::string& path) const {
  SF_CHECK_CODE(XGBoosterSaveModel(booster_->handle, path.c_str()) == 0, ErrorCode::kIoError)
      << "cannot write the cost model '" << path << "': " << XGBGetLastError();
}

std::vector<double> CostModel::score(const std::vector<std::vector<double>>& rows) const {
  if (rows.empty()) return {};
  Matrix m(rows, names_.size());
  bst_ulong count = 0;
  const float* out = nullptr;
  xgb(XGBoosterPredict(booster_->handle, m.handle, 0, 0, 0, &count, &out), "XGBoosterPredict");
  SF_ICHECK(count == rows.size()) << count << " scores for " << rows.size() << " rows";
  return std::vector<double>(out, out + count);
}

}  // namespace sparseflow::tune
