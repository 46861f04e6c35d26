# General matrix multiply (Ansor GMM): C = A x B, 512 x 512 x 512, row-major.
workload gmm_512(M = 512, N = 512, K = 512) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
