# 2-D convolution (Ansor C2D), ResNet-50 conv2_x 3x3 layer: batch 1,
# 64 -> 64 channels, 56 x 56, kernel 3 x 3, stride 1, padding 1.
# NCHW input, KCRS weights (constant: packed once, ahead of the calls);
# padding is a select guard on the input.
workload c2d_resnet_3x3(N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C, R, S]
  out[n, k, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] = sum(c: C, r: R, s: S)
      select(h + r - P >= 0 && h + r - P < H && w + s - P >= 0 && w + s - P < W,
             X[n, c, h + r - P, w + s - P], 0.0) * Wt[k, c, r, s]
  output out
}
