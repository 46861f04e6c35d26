# 3-D convolution (Ansor C3D), a 3-D ResNet-18 layer: batch 1, 64 -> 64
# channels, 8 frames of 28 x 28, kernel 3 x 3 x 3, stride 1, padding 1.
# NCDHW input, KCTRS weights.
workload c3d(N = 1, C = 64, D = 8, H = 28, W = 28, K = 64, T = 3, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, D, H, W]
  Wt = input f32[K, C, T, R, S]
  out[n, k, d: D + 2 * P - T + 1, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] =
      sum(c: C, t: T, r: R, s: S)
      select(d + t - P >= 0 && d + t - P < D && h + r - P >= 0 && h + r - P < H &&
             w + s - P >= 0 && w + s - P < W,
             X[n, c, d + t - P, h + r - P, w + s - P], 0.0) * Wt[k, c, t, r, s]
  output out
}
