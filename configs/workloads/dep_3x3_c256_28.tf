# Depthwise convolution (Ansor DEP), MobileNet-style layer: batch 1,
# 256 channels, 28 x 28, kernel 3 x 3, stride 1, padding 1, multiplier 1.
workload dep_3x3_c256_28(N = 1, C = 256, H = 28, W = 28, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] = sum(r: R, s: S)
      select(h + r - P >= 0 && h + r - P < H && w + s - P >= 0 && w + s - P < W,
             X[n, c, h + r - P, w + s - P], 0.0) * Wt[c, r, s]
  output out
}
