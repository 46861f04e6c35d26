// Dataset, XGBoostCostModel and RandomCostModel (cost_model.h).
#include "tunefarm/costmodel/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "tunefarm/costmodel/metrics.h"

namespace tunefarm::costmodel {

MeasuredCandidate MeasuredCandidate::FromLowered(std::string workload_key, const ir::PrimFunc& lowered,
                                                 double seconds, bool failed) {
  MeasuredCandidate c;
  c.workload_key = std::move(workload_key);
  c.features = ExtractFeatures(lowered);
  c.seconds = seconds;
  c.failed = failed;
  return c;
}

MeasuredCandidate MeasuredCandidate::FromFeatures(std::string workload_key, FeatureVector features, double seconds,
                                                  bool failed) {
  MeasuredCandidate c;
  c.workload_key = std::move(workload_key);
  c.features = std::move(features);
  c.seconds = seconds;
  c.failed = failed;
  return c;
}

// ---------------------------------------------------------------- CostModel

Result<std::vector<double>> CostModel::PredictCached(const std::vector<CachedProgram>& programs) {
  std::vector<const ir::PrimFunc*> lowered;
  lowered.reserve(programs.size());
  for (const CachedProgram& p : programs) lowered.push_back(p.lowered);
  return Predict(lowered);
}

// ------------------------------------------------------------------ Dataset

Status Dataset::Add(const MeasuredCandidate& c) {
  Group& g = groups_[c.workload_key];
  const size_t offset = g.features.size();
  if (!c.features.empty()) {
    if (c.features.size() != static_cast<size_t>(kNumFeatures)) {
      return Status::InvalidArgument("Dataset::Add: " + std::to_string(c.features.size()) + " features, expected " +
                                     std::to_string(kNumFeatures));
    }
    g.features.insert(g.features.end(), c.features.begin(), c.features.end());
  } else if (c.lowered) {
    g.features.resize(offset + kNumFeatures);
    ExtractFeatures(*c.lowered, g.features.data() + offset);
  } else {
    return Status::InvalidArgument("Dataset::Add: candidate of '" + c.workload_key +
                                   "' has neither features nor a lowered program");
  }
  // A non-positive time can only be a broken measurement: treat it as failed.
  const bool ok = !c.failed && c.seconds > 0;
  g.throughput.push_back(ok ? 1.0 / c.seconds : 0.0);
  ++size_;
  return Status::OK();
}

size_t Dataset::CountRows(const std::set<std::string>& exclude) const {
  size_t n = 0;
  for (const auto& [key, g] : groups_) {
    if (!exclude.count(key)) n += g.throughput.size();
  }
  return n;
}

void Dataset::Erase(const std::string& workload_key) {
  auto it = groups_.find(workload_key);
  if (it == groups_.end()) return;
  size_ -= it->second.throughput.size();
  groups_.erase(it);
}

Dataset::TrainingSet Dataset::Build(LabelKind label, double bins_per_octave, const std::set<std::string>& exclude) const {
  TrainingSet t;
  const size_t rows = CountRows(exclude);
  t.x.resize(static_cast<Eigen::Index>(rows), kNumFeatures);
  t.labels.reserve(rows);
  Eigen::Index row = 0;
  for (const auto& [key, g] : groups_) {
    if (exclude.count(key)) continue;
    const size_t n = g.throughput.size();
    std::copy(g.features.begin(), g.features.end(), t.x.row(row).data());
    row += static_cast<Eigen::Index>(n);
    const double best = *std::max_element(g.throughput.begin(), g.throughput.end());
    if (label == LabelKind::kLog || label == LabelKind::kLogBins) {
      // Failed candidates rank below the slowest that ran.
      double lowest = 0;
      for (double tp : g.throughput) {
        if (tp > 0) lowest = std::min(lowest, std::log2(tp / best));
      }
      for (double tp : g.throughput) {
        double y = tp > 0 ? std::log2(tp / best) : lowest - 1;
        if (label == LabelKind::kLogBins) y = std::floor(y * bins_per_octave);
        t.labels.push_back(static_cast<float>(y));
      }
    } else {
      const double scale = label == LabelKind::kLevels ? 31 : 1;
      for (double tp : g.throughput) {
        const double y = best > 0 ? scale * tp / best : 0;
        t.labels.push_back(static_cast<float>(label == LabelKind::kLevels ? std::round(y) : y));
      }
    }
    t.groups.push_back(static_cast<unsigned>(n));
  }
  return t;
}

// --------------------------------------------------------- XGBoostCostModel

XGBoostCostModel::XGBoostCostModel(XGBoostCostModelOptions options) : options_(std::move(options)) {}

Status XGBoostCostModel::Retrain() {
  if (dataset_.size() < options_.min_records_to_train) return Status::OK();
  Dataset::TrainingSet t = dataset_.Build(options_.label, options_.bins_per_octave);
  TF_RETURN_IF_ERROR(model_.Train(t.x, t.labels, t.groups, options_.params));
  if (!TransferActive() || dataset_.CountRows(transfer_keys_) < options_.min_records_to_train) return Status::OK();
  Dataset::TrainingSet own = dataset_.Build(options_.label, options_.bins_per_octave, transfer_keys_);
  return own_model_.Train(own.x, own.labels, own.groups, options_.params);
}

Status XGBoostCostModel::WarmStart(const std::vector<MeasuredCandidate>& records) {
  for (const MeasuredCandidate& c : records) {
    TF_RETURN_IF_ERROR(dataset_.Add(c));
    if (options_.transfer_check_min_pairs > 0) transfer_keys_.insert(c.workload_key);
  }
  transfer_.transfer_records += records.size();
  return Retrain();
}

Status XGBoostCostModel::CompareOnBatch(const std::vector<MeasuredCandidate>& measured) {
  FeatureMatrix x(static_cast<Eigen::Index>(measured.size()), kNumFeatures);
  for (size_t i = 0; i < measured.size(); ++i) {
    const MeasuredCandidate& c = measured[i];
    if (c.features.size() != static_cast<size_t>(kNumFeatures)) {
      return Status::InvalidArgument("XGBoostCostModel::Update: candidate of '" + c.workload_key +
                                     "' has neither features nor a lowered program");
    }
    std::copy(c.features.begin(), c.features.end(), x.row(static_cast<Eigen::Index>(i)).data());
  }
  TF_ASSIGN_OR_RETURN(std::vector<float> with_transfer, model_.Predict(x));
  TF_ASSIGN_OR_RETURN(std::vector<float> own_only, own_model_.Predict(x));
  // Pairs within one workload only: scores of different workloads are not comparable.
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!transfer_keys_.count(measured[i].workload_key)) by_key[measured[i].workload_key].push_back(i);
  }
  for (const auto& [key, rows] : by_key) {
    std::vector<double> truth, a, b;
    for (size_t i : rows) {
      const MeasuredCandidate& c = measured[i];
      truth.push_back(!c.failed && c.seconds > 0 ? 1.0 / c.seconds : 0.0);
      a.push_back(with_transfer[i]);
      b.push_back(own_only[i]);
    }
    const PairCounts ca = CountAgreeingPairs(a, truth), cb = CountAgreeingPairs(b, truth);
    agree_with_transfer_ += ca.agree;
    agree_own_only_ += cb.agree;
    transfer_.pairs += ca.pairs;
  }
  if (transfer_.pairs > 0) {
    transfer_.with_transfer = agree_with_transfer_ / static_cast<double>(transfer_.pairs);
    transfer_.own_only = agree_own_only_ / static_cast<double>(transfer_.pairs);
  }
  return Status::OK();
}

void XGBoostCostModel::DropTransfer() {
  transfer_.dropped = true;
  transfer_.own_records_at_drop = dataset_.CountRows(transfer_keys_);
  for (const std::string& key : transfer_keys_) dataset_.Erase(key);
  transfer_keys_.clear();
  // The next Retrain trains model_ on the own rows; own_model_ is not needed again.
  own_model_ = XGBoostModel();
}

Status XGBoostCostModel::Update(const std::vector<MeasuredCandidate>& measured) {
  if (TransferActive() && model_.trained() && own_model_.trained()) {
    // Features extracted once, for the check and the dataset.
    std::vector<MeasuredCandidate> rows = measured;
    for (MeasuredCandidate& c : rows) {
      if (c.features.empty() && c.lowered) c.features = ExtractFeatures(*c.lowered);
    }
    // Scored before they are learned from: the batch is held-out data for both models.
    TF_RETURN_IF_ERROR(CompareOnBatch(rows));
    for (const MeasuredCandidate& c : rows) TF_RETURN_IF_ERROR(dataset_.Add(c));
  } else {
    for (const MeasuredCandidate& c : measured) TF_RETURN_IF_ERROR(dataset_.Add(c));
  }
  if (TransferActive() && transfer_.pairs >= options_.transfer_check_min_pairs &&
      agree_own_only_ >= agree_with_transfer_) {
    DropTransfer();
  }
  return Retrain();
}

Result<std::vector<double>> XGBoostCostModel::PredictFeatures(const FeatureMatrix& x) {
  if (!model_.trained()) return std::vector<double>(static_cast<size_t>(x.rows()), 0.0);
  TF_ASSIGN_OR_RETURN(std::vector<float> scores, model_.Predict(x));
  return std::vector<double>(scores.begin(), scores.end());
}

Result<std::vector<double>> XGBoostCostModel::Predict(const std::vector<const ir::PrimFunc*>& lowered) {
  if (!model_.trained()) return std::vector<double>(lowered.size(), 0.0);
  return PredictRows(lowered.size(), [&](size_t i, float* row) { ExtractFeatures(*lowered[i], row); });
}

Result<std::vector<double>> XGBoostCostModel::PredictCached(const std::vector<CachedProgram>& programs) {
  // Before the first training every score is 0: nothing to extract yet.
  if (!model_.trained()) return std::vector<double>(programs.size(), 0.0);
  return PredictRows(programs.size(), [&](size_t i, float* row) {
    const CachedProgram& p = programs[i];
    if (!p.features) {
      ExtractFeatures(*p.lowered, row);
      return;
    }
    const FeatureVector& f = p.features->Get(*p.lowered);
    std::copy(f.begin(), f.end(), row);
  });
}

Result<std::vector<double>> XGBoostCostModel::PredictRows(size_t n, const std::function<void(size_t, float*)>& fill) {
  // Fills and predicts a chunk of rows at a time: a chunk's features
  // (64 x 2.4 KB) are still in L2 when the trees read them, where a whole
  // batch's matrix (2.4 MB for 1,000 candidates) has left it.
  constexpr size_t kChunk = 64;
  scratch_.resize(static_cast<Eigen::Index>(std::min(kChunk, n)), kNumFeatures);
  std::vector<double> scores(n);
  std::array<float, kChunk> out{};
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t rows = std::min(kChunk, n - begin);
    for (size_t i = 0; i < rows; ++i) fill(begin + i, scratch_.row(static_cast<Eigen::Index>(i)).data());
    TF_RETURN_IF_ERROR(model_.Predict(scratch_.data(), rows, kNumFeatures, out.data()));
    std::copy(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(rows), scores.begin() + static_cast<std::ptrdiff_t>(begin));
  }
  return scores;
}

Status XGBoostCostModel::Save(const std::string& path) const { return model_.SaveToFile(path); }

Status XGBoostCostModel::Load(const std::string& path) { return model_.LoadFromFile(path); }

// ----------------------------------------------------------- RandomCostModel

std::vector<double> RandomCostModel::Draw(size_t n) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> out(n);
  for (double& v : out) v = u(rng_);
  return out;
}

Result<std::vector<double>> RandomCostModel::Predict(const std::vector<const ir::PrimFunc*>& lowered) {
  return Draw(lowered.size());
}

Result<std::vector<double>> RandomCostModel::PredictFeatures(const FeatureMatrix& x) {
  return Draw(static_cast<size_t>(x.rows()));
}

}  // namespace tunefarm::costmodel
