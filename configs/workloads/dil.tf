# Dilated convolution (Ansor DIL), a DeepLab-style atrous layer: batch 1,
# 64 -> 64 channels, 56 x 56, kernel 3 x 3, dilation 2, stride 1, padding 2.
workload dil(N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, P = 2) {
  X  = input f32[N, C, H, W]
  Wt = input f32[K, C, R, S]
  out[n, k, h: H + 2 * P - 2 * (R - 1), w: W + 2 * P - 2 * (S - 1)] = sum(c: C, r: R, s: S)
      select(h + r * 2 - P >= 0 && h + r * 2 - P < H && w + s * 2 - P >= 0 && w + s * 2 - P < W,
             X[n, c, h + r * 2 - P, w + s * 2 - P], 0.0) * Wt[k, c, r, s]
  output out
}
