# 1-D convolution (Ansor C1D): batch 1, length 256, 64 -> 128 channels,
# kernel 3, stride 2, padding 1. NCW input, KCR weights.
workload c1d(N = 1, C = 64, L = 256, K = 128, R = 3, P = 1) {
  X  = input f32[N, C, L]
  Wt = input f32[K, C, R]
  out[n, k, l: (L + 2 * P - R) / 2 + 1] = sum(c: C, r: R)
      select(l * 2 + r - P >= 0 && l * 2 + r - P < L, X[n, c, l * 2 + r - P], 0.0) * Wt[k, c, r]
  output out
}
