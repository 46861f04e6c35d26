# 2-D convolution (Ansor C2D), ResNet-50 stem: batch 1, 3 -> 64 channels,
# 224 x 224, kernel 7 x 7, stride 2, padding 3. NCHW input, KCRS weights.
workload c2d_resnet_7x7_s2(N = 1, C = 3, H = 224, W = 224, K = 64, R = 7, S = 7, P = 3) {
  X  = input f32[N, C, H, W]
  Wt = input f32[K, C, R, S]
  out[n, k, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(c: C, r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[k, c, r, s]
  output out
}
