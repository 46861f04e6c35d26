# Batch matmul of BERT-base self-attention scores, Q x K^T per head:
# 12 heads, sequence length 128, head size 64.
workload batch_matmul_bert(B = 12, L = 128, D = 64) {
  Q = input f32[B, L, D]
  K = input f32[B, L, D]
  S[b, i, j] = sum(d: D) Q[b, i, d] * K[b, j, d]
  output S
}
