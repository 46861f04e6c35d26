# Layer normalisation over the hidden dimension of BERT-base activations:
# 128 tokens x 768 features, epsilon 1e-5, learned scale and shift.
workload layer_norm(M = 128, N = 768) {
  X     = input f32[M, N]
  gamma = input f32[N]
  beta  = input f32[N]
  s[i]    = sum(j: N) X[i, j]
  mean[i] = s[i] / N
  d[i, j] = X[i, j] - mean[i]
  ss[i]   = sum(j: N) d[i, j] * d[i, j]
  rstd[i] = rsqrt(ss[i] / N + 1e-5)
  out[i, j] = d[i, j] * rstd[i] * gamma[j] + beta[j]
  output out
}
