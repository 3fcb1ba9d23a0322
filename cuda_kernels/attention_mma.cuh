// The PTX the tensor-core attention kernels are built from (sm_80 and newer): asynchronous
// global-to-shared copies (cp.async), ldmatrix, mma.sync m16n8k16 with float accumulators for
// bfloat16 and float16, and the packing of float pairs into 16-bit pairs. Fragment layouts:
// Note [mma.sync fragments] (attention_fragments.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/half.h"
#include "cuda_kernels/attention_fragments.h"

namespace gr::cuda::mma {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, asynchronously; the bytes past src_bytes (0..16) are
// zero-filled and not read. Both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most n of this thread's committed groups are still in flight.
template <int n>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory");
}

// Four 8 x 8 matrices of 16-bit values (Note [mma.sync fragments]).
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(row)));
}

// The 16-bit type's products: C[16, 8] += A[16, 16] B[16, 8] with float C, and (lo, hi) rounded
// to a 16-bit pair, lo in the low half.
template <class T>
struct Ops;

template <>
struct Ops<BFloat16> {
  static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
};

template <>
struct Ops<Half> {
  static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
};

// C tiles c0, c1 += A times the two n-tiles of B of an ldmatrix.x4 (registers 0, 1 and 2, 3).
template <class T>
__device__ __forceinline__ void mma_pair(float c0[4], float c1[4], const uint32_t a[4], const uint32_t b[4]) {
  Ops<T>::mma(c0, a, b[0], b[1]);
  Ops<T>::mma(c1, a, b[2], b[3]);
}

// The A operand of a product over 16 columns from the float C of the two n-tiles covering them
// (Note [mma.sync fragments]): c0 for columns 0..7, c1 for 8..15.
template <class T>
__device__ __forceinline__ void c_to_a(uint32_t a[4], const float c0[4], const float c1[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const float* c = c_tile(r) == 0 ? c0 : c1;
    a[r] = Ops<T>::pack(c[c_elem(r, 0)], c[c_elem(r, 1)]);
  }
}

}  // namespace gr::cuda::mma
