// What oneDNN is asked to compute beside a tunefarm kernel: an op class,
// the dense layer's activation and the convolutions' strides and padding.
// The shapes come from the workload's buffers (onednn_reference.h); this is
// the rest. Header-only and free of oneDNN, so that the tests check the
// mapping of every suite workload and layer without the library.
//
// The buffers each op class reads, by the workload's tensor names:
//   kMatmul           A[M, K], B[K, N] (constant)
//   kDense            A[M, K], W[N, K], bias[N] (constant), activation post-op
//   kConv2d           X[N, C, H, W], Wt[K, C, R, S]
//   kDepthwiseConv2d  X[N, C, H, W], Wt[C, R, S] (a grouped convolution, groups = C)
//   kDeconv2d         X[N, C, H, W], Wt[C, K, R, S]
//   kBatchMatmulNT    X[B, M, K], Y[B, N, K] (out = X x Y^T per batch)
//   kBatchMatmulNN    X[B, M, K], Y[B, K, N]
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::bench {

enum class OneDnnOpClass { kMatmul, kDense, kConv2d, kDepthwiseConv2d, kDeconv2d, kBatchMatmulNT, kBatchMatmulNN };
enum class OneDnnActivation { kNone, kRelu, kGeluErf };

struct OneDnnSpec {
  OneDnnOpClass op = OneDnnOpClass::kMatmul;
  OneDnnActivation activation = OneDnnActivation::kNone;  // kDense only
  std::array<int64_t, 2> strides = {1, 1};                // convolutions: height, width
  std::array<int64_t, 2> padding = {0, 0};                // convolutions: each side, height, width
};

// The six workloads of bench/tune/run.sh by name (configs/workloads/).
inline Result<OneDnnSpec> SuiteOneDnnSpec(const std::string& name) {
  OneDnnSpec s;
  if (name == "gmm_1024" || name == "gmm_512") return s;
  if (name == "dense_bias_relu") {
    s.op = OneDnnOpClass::kDense;
    s.activation = OneDnnActivation::kRelu;
    return s;
  }
  if (name == "c2d_resnet_3x3" || name == "dep_3x3_c256_28") {
    s.op = name == "c2d_resnet_3x3" ? OneDnnOpClass::kConv2d : OneDnnOpClass::kDepthwiseConv2d;
    s.padding = {1, 1};
    return s;
  }
  if (name == "t2d") {
    s.op = OneDnnOpClass::kDeconv2d;
    s.strides = {2, 2};
    s.padding = {1, 1};
    return s;
  }
  return Status::InvalidArgument("no oneDNN peer for workload " + name);
}

// A layer of configs/layers/ from its manifest row's op class and activation
// and its workload's parameters (strides SH, SW and paddings PH, PW of the
// convolutions), as configs/layers/README.md defines them.
inline Result<OneDnnSpec> LayerOneDnnSpec(const std::string& op, const std::string& act,
                                          const std::vector<std::pair<std::string, int64_t>>& params) {
  auto param = [&](const char* name) -> Result<int64_t> {
    for (const auto& [n, v] : params) {
      if (n == name) return v;
    }
    return Status::InvalidArgument(op + " layer has no parameter " + name);
  };
  OneDnnSpec s;
  if (act == "relu") s.activation = OneDnnActivation::kRelu;
  else if (act == "gelu_erf") s.activation = OneDnnActivation::kGeluErf;
  else if (act != "none") return Status::InvalidArgument("unknown activation " + act);
  if (s.activation != OneDnnActivation::kNone && op != "dense") {
    return Status::InvalidArgument("activation " + act + " on a " + op + " layer: only dense layers have one");
  }
  if (op == "dense") {
    s.op = OneDnnOpClass::kDense;
  } else if (op == "batch_matmul_nt" || op == "batch_matmul_nn") {
    s.op = op == "batch_matmul_nt" ? OneDnnOpClass::kBatchMatmulNT : OneDnnOpClass::kBatchMatmulNN;
  } else if (op == "conv2d" || op == "depthwise_conv2d") {
    s.op = op == "conv2d" ? OneDnnOpClass::kConv2d : OneDnnOpClass::kDepthwiseConv2d;
    TF_ASSIGN_OR_RETURN(s.strides[0], param("SH"));
    TF_ASSIGN_OR_RETURN(s.strides[1], param("SW"));
    TF_ASSIGN_OR_RETURN(s.padding[0], param("PH"));
    TF_ASSIGN_OR_RETURN(s.padding[1], param("PW"));
  } else {
    return Status::InvalidArgument("unknown op class " + op);
  }
  return s;
}

}  // namespace tunefarm::bench
