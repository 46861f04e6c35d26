# Capsule 2-D convolution (Ansor CAP): batch 1, 16 x 16, 32 -> 32 channels of
# 4 x 4 capsules, kernel 3 x 3, stride 2, padding 1. Input [N, H, W, I, J, C]
# (a 4 x 4 pose matrix per channel); weights [R, S, J, L, C, K]; output pose
# matrices are products of input poses and weight matrices.
workload cap(N = 1, H = 16, W = 16, C = 32, K = 32, CAP = 4, R = 3, S = 3, P = 1) {
  X  = input f32[N, H, W, CAP, CAP, C]
  Wt = input f32[R, S, CAP, CAP, C, K]
  out[n, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1, i, l, k] =
      sum(r: R, s: S, j: CAP, c: C)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, h * 2 + r - P, w * 2 + s - P, i, j, c], 0.0) * Wt[r, s, j, l, c, k]
  output out
}
