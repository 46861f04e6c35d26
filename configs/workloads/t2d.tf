# Transposed 2-D convolution (Ansor T2D), DCGAN generator layer: batch 1,
# 512 -> 256 channels, 4 x 4 -> 8 x 8, kernel 4 x 4, stride 2, padding 1.
# Output pixel (h, w) gathers input (ih, iw) where h + P - r = 2 * ih.
# Weights [C, K, R, S] as in the framework's conv_transpose, constant (a
# schedule may pack them once, ahead of the calls). Lowering visits
# only the taps that pass the stride test, 1 in 4 (decompose_strided_gather.h).
workload t2d(N = 1, C = 512, H = 4, W = 4, K = 256, R = 4, S = 4, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, K, R, S]
  out[n, k, h: (H - 1) * 2 - 2 * P + R, w: (W - 1) * 2 - 2 * P + S] = sum(c: C, r: R, s: S)
      select((h + P - r) % 2 == 0 && (h + P - r) / 2 >= 0 && (h + P - r) / 2 < H &&
             (w + P - s) % 2 == 0 && (w + P - s) / 2 >= 0 && (w + P - s) / 2 < W,
             X[n, c, (h + P - r) / 2, (w + P - s) / 2], 0.0) * Wt[c, k, r, s]
  output out
}
