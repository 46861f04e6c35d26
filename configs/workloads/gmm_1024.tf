# General matrix multiply (Ansor GMM): C = A x B, 1024 x 1024 x 1024, row-major.
workload gmm_1024(M = 1024, N = 1024, K = 1024) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
