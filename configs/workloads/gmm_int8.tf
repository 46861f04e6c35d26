# Quantized matrix multiply: int8 x int8 -> int32 accumulation (the inner
# product of a quantized dense layer, B stored transposed as in VNNI kernels).
workload gmm_int8(M = 512, N = 512, K = 512) {
  A = input i8[M, K]
  B = input i8[N, K]
  C[i, j] = sum(k: K) i32(A[i, k]) * i32(B[j, k])
  output C
}
