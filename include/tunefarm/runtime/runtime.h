/* tunefarm runtime: the small C library that generated kernels call.
 *
 * An ahead-of-time kernel object links against libtunefarm_runtime and nothing
 * else of tunefarm. The thread pool is created on first use and lives until
 * process exit; its size is TUNEFARM_NUM_THREADS, else the number of CPUs. */
#ifndef TUNEFARM_RUNTIME_RUNTIME_H_
#define TUNEFARM_RUNTIME_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Body of a parallel loop: runs iterations [begin, end) with the captured closure. */
typedef int32_t (*tunefarm_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, n) split into contiguous chunks across the pool, and waits.
 * Nested calls from inside a body run serially. Returns the first non-zero
 * code a body returned, else 0. */
int32_t tunefarm_parallel_for(int64_t n, tunefarm_parallel_body body, void* closure);

/* Aligned heap memory for kernel-local buffers; never returns NULL for size > 0
 * unless out of memory. Free it with tunefarm_free only. Large blocks freed
 * are kept for the next request of the same size and alignment, so that a
 * kernel called again does not fault its buffers' pages in afresh. */
void* tunefarm_alloc(int64_t size_bytes, int64_t alignment);
void tunefarm_free(void* ptr);

/* Number of threads parallel loops use; setting 0 restores the default. */
void tunefarm_set_num_threads(int32_t n);
int32_t tunefarm_get_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* TUNEFARM_RUNTIME_RUNTIME_H_ */
