# Group convolution (Ansor GRP), ResNeXt-50 conv2 3x3 layer: batch 1,
# 128 -> 128 channels in 32 groups (4 channels each), 56 x 56, kernel 3 x 3,
# stride 1, padding 1. NCHW input, weights [K, C / G, R, S].
workload grp(N = 1, C = 128, H = 56, W = 56, K = 128, G = 32, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input f32[K, C / G, R, S]
  out[n, k, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] = sum(c: C / G, r: R, s: S)
      select(h + r - P >= 0 && h + r - P < H && w + s - P >= 0 && w + s - P < W,
             X[n, k / (K / G) * (C / G) + c, h + r - P, w + s - P], 0.0) * Wt[k, c, r, s]
  output out
}
