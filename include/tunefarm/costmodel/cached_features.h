// CachedFeatures: a lowered program's features, extracted on first use and
// kept. A search scores a candidate in several generations, then the model
// learns from it once it is measured; with the candidate's CachedFeatures
// (tuner::Candidate::features) all of that reads one extraction.
//
// It holds no program: every call passes the one it was made for (the
// candidate's `lowered`). Not thread-safe; copies are independent (share it
// through a pointer).
#pragma once

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel {

class CachedFeatures {
 public:
  // ExtractFeatures(lowered) on the first call; the same values after.
  const FeatureVector& Get(const ir::PrimFunc& lowered) {
    if (features_.empty()) features_ = ExtractFeatures(lowered);
    return features_;
  }
  bool extracted() const { return !features_.empty(); }

 private:
  FeatureVector features_;  // empty until Get; then kNumFeatures values
};

}  // namespace tunefarm::costmodel
