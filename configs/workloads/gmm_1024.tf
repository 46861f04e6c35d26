# General matrix multiply (Ansor GMM): C = A x B, 1024 x 1024 x 1024, row-major.
# B is a layer's weights (`input const`): a schedule may pack it once, ahead
# of the calls, as oneDNN reorders its weights at setup.
workload gmm_1024(M = 1024, N = 1024, K = 1024) {
  A = input f32[M, K]
  B = input const f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
