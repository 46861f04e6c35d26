// XGBoostModel over XGBoost's C API (xgboost/c_api.h, 1.7). The only file in
// tunefarm that includes the XGBoost header.
#include "tunefarm/costmodel/xgboost_model.h"

#include "tree_ensemble.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

namespace tunefarm::costmodel {

namespace {

// Every C API call returns 0 or -1; on -1 the message lives in a
// thread-local string that the next call may overwrite, so it is read at once.
Status XgbError(const char* what) { return Status::Internal(std::string("XGBoost ") + what + ": " + XGBGetLastError()); }

#define TF_XGB(call, what)                       \
  do {                                           \
    if ((call) != 0) return XgbError(what);      \
  } while (0)

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// Frees a DMatrix on scope exit.
struct DMatrixGuard {
  DMatrixHandle h = nullptr;
  ~DMatrixGuard() {
    if (h) XGDMatrixFree(h);
  }
};

}  // namespace

XGBoostModel::~XGBoostModel() { Reset(); }

XGBoostModel::XGBoostModel(XGBoostModel&& other) noexcept
    : booster_(std::exchange(other.booster_, nullptr)),
      trees_(std::move(other.trees_)),
      num_features_(other.num_features_),
      params_(other.params_) {}

XGBoostModel& XGBoostModel::operator=(XGBoostModel&& other) noexcept {
  if (this != &other) {
    Reset();
    booster_ = std::exchange(other.booster_, nullptr);
    trees_ = std::move(other.trees_);
    num_features_ = other.num_features_;
    params_ = other.params_;
  }
  return *this;
}

void XGBoostModel::Reset() {
  trees_.reset();
  if (booster_) XGBoosterFree(booster_);
  booster_ = nullptr;
  num_features_ = 0;
}

Status XGBoostModel::CreateBooster(void* const* dmats, uint64_t num_dmats, void** out) const {
  BoosterHandle b = nullptr;
  TF_XGB(XGBoosterCreate(dmats, num_dmats, &b), "XGBoosterCreate");
  const std::pair<const char*, std::string> kv[] = {
      {"verbosity", "0"},
      {"nthread", std::to_string(params_.nthread)},
      {"objective", params_.objective},
      {"tree_method", "hist"},
      {"max_depth", std::to_string(params_.max_depth)},
      {"eta", Num(params_.eta)},
      {"min_child_weight", Num(params_.min_child_weight)},
      {"gamma", Num(params_.gamma)},
      {"subsample", Num(params_.subsample)},
      {"colsample_bytree", Num(params_.colsample_bytree)},
      {"seed", std::to_string(params_.seed)},
      {"disable_default_eval_metric", "1"},
  };
  for (const auto& [key, value] : kv) {
    if (XGBoosterSetParam(b, key, value.c_str()) != 0) {
      Status s = XgbError("XGBoosterSetParam");
      XGBoosterFree(b);
      return s;
    }
  }
  if (params_.objective.rfind("rank:", 0) == 0 &&
      XGBoosterSetParam(b, "num_pairsample", std::to_string(params_.num_pairsample).c_str()) != 0) {
    Status s = XgbError("XGBoosterSetParam(num_pairsample)");
    XGBoosterFree(b);
    return s;
  }
  *out = b;
  return Status::OK();
}

Status XGBoostModel::Train(const FeatureMatrix& x, const std::vector<float>& labels,
                           const std::vector<unsigned>& group_sizes, const XGBoostParams& params) {
  const auto rows = static_cast<bst_ulong>(x.rows());
  const auto cols = static_cast<bst_ulong>(x.cols());
  if (rows == 0 || cols == 0) return Status::InvalidArgument("XGBoostModel::Train: empty feature matrix");
  if (labels.size() != rows) {
    return Status::InvalidArgument("XGBoostModel::Train: " + std::to_string(labels.size()) + " labels for " +
                                   std::to_string(rows) + " rows");
  }
  if (!group_sizes.empty() &&
      std::accumulate(group_sizes.begin(), group_sizes.end(), uint64_t{0}) != static_cast<uint64_t>(rows)) {
    return Status::InvalidArgument("XGBoostModel::Train: group sizes do not sum to the number of rows");
  }
  DMatrixGuard dm;
  TF_XGB(XGDMatrixCreateFromMat(x.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &dm.h),
         "XGDMatrixCreateFromMat");
  TF_XGB(XGDMatrixSetFloatInfo(dm.h, "label", labels.data(), rows), "XGDMatrixSetFloatInfo(label)");
  if (!group_sizes.empty()) {
    TF_XGB(XGDMatrixSetUIntInfo(dm.h, "group", group_sizes.data(), group_sizes.size()),
           "XGDMatrixSetUIntInfo(group)");
  }
  XGBoostParams saved = params_;
  params_ = params;
  void* b = nullptr;
  void* const dmats[] = {dm.h};
  Status s = CreateBooster(dmats, 1, &b);
  if (!s.ok()) {
    params_ = saved;
    return s;
  }
  for (int i = 0; i < params.num_rounds; ++i) {
    if (XGBoosterUpdateOneIter(b, i, dm.h) != 0) {
      s = XgbError("XGBoosterUpdateOneIter");
      XGBoosterFree(b);
      params_ = saved;
      return s;
    }
  }
  Reset();
  booster_ = b;
  num_features_ = static_cast<int>(cols);
  FlattenTrees();
  return Status::OK();
}

namespace {

// The string value after `"key":"` in XGBoost's JSON config, or "".
std::string JsonString(const std::string& json, const std::string& key) {
  size_t p = json.find("\"" + key + "\":\"");
  if (p == std::string::npos) return "";
  p += key.size() + 4;
  size_t e = json.find('"', p);
  return e == std::string::npos ? "" : json.substr(p, e - p);
}

}  // namespace

void XGBoostModel::FlattenTrees() {
  trees_.reset();
  if (!booster_ || num_features_ <= 0) return;
  bst_ulong len = 0;
  const char* config = nullptr;
  if (XGBoosterSaveJsonConfig(booster_, &len, &config) != 0) return;
  const std::string json(config, len);
  // Only objectives whose prediction is the raw margin (no link function).
  const std::string objective = JsonString(json, "objective");  // learner_train_param's
  if (objective.rfind("rank:", 0) != 0 && objective != "reg:squarederror") return;
  const std::string base_text = JsonString(json, "base_score");
  char* end = nullptr;
  const float base = std::strtof(base_text.c_str(), &end);
  if (base_text.empty() || end == base_text.c_str()) return;
  const char** dump = nullptr;
  if (XGBoosterDumpModelEx(booster_, "", 0, "text", &len, &dump) != 0) return;
  std::vector<std::string_view> trees(dump, dump + len);
  auto flat = detail::TreeEnsemble::FromTextDump(trees, base, num_features_);
  if (!flat.ok()) return;
  // The copies must agree with XGBoost, or XGBoost keeps predicting: rows
  // of zeros, ones and deterministic spread values.
  const size_t rows = 8, cols = static_cast<size_t>(num_features_);
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t r = i / cols;
    x[i] = r == 0 ? 0.f : r == 1 ? 1.f : static_cast<float>((i * 2654435761u) % 1000) / 40.f;
  }
  std::vector<float> ours(rows), theirs(rows);
  flat->Predict(x.data(), rows, cols, ours.data());
  if (!PredictWithXGBoost(x.data(), rows, cols, theirs.data()).ok()) return;
  for (size_t r = 0; r < rows; ++r) {
    if (std::fabs(ours[r] - theirs[r]) > 1e-5f * std::max(1.f, std::fabs(theirs[r]))) return;
  }
  trees_ = std::make_shared<const detail::TreeEnsemble>(std::move(flat).value());
}

Status XGBoostModel::Predict(const float* data, size_t rows, size_t cols, float* out) const {
  if (!booster_) return Status::FailedPrecondition("XGBoostModel::Predict: the model is not trained or loaded");
  if (rows == 0) return Status::OK();
  if (static_cast<int>(cols) != num_features_) {
    return Status::InvalidArgument("XGBoostModel::Predict: " + std::to_string(cols) + " features, the model has " +
                                   std::to_string(num_features_));
  }
  if (trees_) {
    trees_->Predict(data, rows, cols, out);
    return Status::OK();
  }
  return PredictWithXGBoost(data, rows, cols, out);
}

Status XGBoostModel::PredictWithXGBoost(const float* data, size_t rows, size_t cols, float* out) const {
  if (!booster_) return Status::FailedPrecondition("XGBoostModel::Predict: the model is not trained or loaded");
  if (rows == 0) return Status::OK();
  if (static_cast<int>(cols) != num_features_) {
    return Status::InvalidArgument("XGBoostModel::Predict: " + std::to_string(cols) + " features, the model has " +
                                   std::to_string(num_features_));
  }
  // In-place prediction over the caller's matrix, described by a NumPy-style
  // array interface; no DMatrix is built.
  const std::string array = "{\"data\": [" + std::to_string(reinterpret_cast<uintptr_t>(data)) +
                            ", true], \"shape\": [" + std::to_string(rows) + ", " + std::to_string(cols) +
                            "], \"typestr\": \"<f4\", \"version\": 3}";
  static const char* kConfig =
      "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
      "\"strict_shape\": false, \"missing\": NaN, \"cache_id\": 0}";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  TF_XGB(XGBoosterPredictFromDense(booster_, array.c_str(), kConfig, nullptr, &shape, &dim, &result),
         "XGBoosterPredictFromDense");
  bst_ulong n = 1;
  for (bst_ulong i = 0; i < dim; ++i) n *= shape[i];
  if (n != rows) return Status::Internal("XGBoost returned " + std::to_string(n) + " scores for " + std::to_string(rows) + " rows");
  std::copy(result, result + rows, out);
  return Status::OK();
}

Result<std::vector<float>> XGBoostModel::Predict(const FeatureMatrix& x) const {
  std::vector<float> out(static_cast<size_t>(x.rows()));
  TF_RETURN_IF_ERROR(Predict(x.data(), static_cast<size_t>(x.rows()), static_cast<size_t>(x.cols()), out.data()));
  return out;
}

Status XGBoostModel::SaveToFile(const std::string& path) const {
  if (!booster_) return Status::FailedPrecondition("XGBoostModel::SaveToFile: the model is not trained or loaded");
  // XGBoost picks the format from the extension; JSON unless told otherwise.
  TF_XGB(XGBoosterSaveModel(booster_, path.c_str()), ("XGBoosterSaveModel(" + path + ")").c_str());
  return Status::OK();
}

Result<std::string> XGBoostModel::SaveToBytes() const {
  if (!booster_) return Status::FailedPrecondition("XGBoostModel::SaveToBytes: the model is not trained or loaded");
  bst_ulong len = 0;
  const char* bytes = nullptr;
  TF_XGB(XGBoosterSaveModelToBuffer(booster_, "{\"format\": \"json\"}", &len, &bytes), "XGBoosterSaveModelToBuffer");
  return std::string(bytes, len);
}

Status XGBoostModel::AfterLoad(void* handle) {
  bst_ulong n = 0;
  if (XGBoosterGetNumFeature(handle, &n) != 0) {
    Status s = XgbError("XGBoosterGetNumFeature");
    XGBoosterFree(handle);
    return s;
  }
  // The thread count is a runtime setting, not part of the saved model.
  if (XGBoosterSetParam(handle, "nthread", std::to_string(params_.nthread).c_str()) != 0) {
    Status s = XgbError("XGBoosterSetParam(nthread)");
    XGBoosterFree(handle);
    return s;
  }
  Reset();
  booster_ = handle;
  num_features_ = static_cast<int>(n);
  FlattenTrees();
  return Status::OK();
}

Status XGBoostModel::LoadFromFile(const std::string& path) {
  void* b = nullptr;
  TF_RETURN_IF_ERROR(CreateBooster(nullptr, 0, &b));
  if (XGBoosterLoadModel(b, path.c_str()) != 0) {
    Status s = XgbError(("XGBoosterLoadModel(" + path + ")").c_str());
    XGBoosterFree(b);
    return Status(StatusCode::kCorruption, s.message());
  }
  return AfterLoad(b);
}

Status XGBoostModel::LoadFromBytes(std::string_view bytes) {
  if (bytes.empty()) return Status::Corruption("XGBoostModel::LoadFromBytes: empty model");
  void* b = nullptr;
  TF_RETURN_IF_ERROR(CreateBooster(nullptr, 0, &b));
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0) {
    Status s = XgbError("XGBoosterLoadModelFromBuffer");
    XGBoosterFree(b);
    return Status(StatusCode::kCorruption, s.message());
  }
  return AfterLoad(b);
}

}  // namespace tunefarm::costmodel
