# Matrix norm (Ansor NRM): Frobenius norm of each matrix of a batch,
# batch 1 of 256 x 256.
workload nrm(B = 1, M = 256, N = 256) {
  X = input f32[B, M, N]
  sq[b] = sum(i: M, j: N) X[b, i, j] * X[b, i, j]
  out[b] = sqrt(sq[b])
  output out
}
