# General matrix multiply (Ansor GMM): C = A x B, 512 x 512 x 512, row-major.
# B is a layer's weights (`input const`): a schedule may pack it once, ahead
# of the calls, as oneDNN reorders its weights at setup.
workload gmm_512(M = 512, N = 512, K = 512) {
  A = input f32[M, K]
  B = input const f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
