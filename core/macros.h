// Portability macros shared by CPU and CUDA code: GR_HOST_DEVICE marks math both compile.
#pragma once

#if defined(__CUDACC__)
#define GR_HOST_DEVICE __host__ __device__
#define GR_INLINE __forceinline__
#else
#define GR_HOST_DEVICE
#define GR_INLINE inline
#endif
