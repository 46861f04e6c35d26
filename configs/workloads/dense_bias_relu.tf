# Dense layer with bias and ReLU, as in a transformer's MLP (BERT-base
# intermediate layer: 128 tokens, 768 -> 3072 features).
workload dense_bias_relu(M = 128, N = 3072, K = 768) {
  A    = input f32[M, K]
  W    = input const f32[N, K]
  bias = input const f32[N]
  acc[i, j] = sum(k: K) A[i, k] * W[j, k]
  out[i, j] = max(acc[i, j] + bias[j], 0.0)
  output out
}
