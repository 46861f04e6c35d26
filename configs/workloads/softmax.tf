# Row softmax of BERT-base attention scores: 12 heads x 128 queries = 1536
# rows of 128 keys, numerically stable (subtract the row maximum).
workload softmax(M = 1536, N = 128) {
  X = input f32[M, N]
  mx[i] = max(j: N) X[i, j]
  e[i, j] = exp(X[i, j] - mx[i])
  s[i] = sum(j: N) e[i, j]
  out[i, j] = e[i, j] / s[i]
  output out
}
