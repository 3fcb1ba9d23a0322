// The arithmetic of the indexing kernels (masked_fill, scatter's reductions), written once
// for the CPU loops (core/native/index/index_cpu.cpp) and the CUDA kernels (cuda_kernels/index_ops.cu).
#pragma once

#include <math.h>

#include <type_traits>

#include "core/half.h"
#include "core/macros.h"

namespace gr::functors {

// The CPU loop reads the bool mask as bytes (Note [Bools read as bytes], core/native/elementwise/bool_bytes.h).
template <class T> struct MaskedFill {
  T value;
  GR_HOST_DEVICE T operator()(T x, bool mask) const { return mask ? value : x; }
};

// How scatter, index_add/index_copy and index_put_ combine a value with the destination.
template <class T> struct ScatterAssign {
  GR_HOST_DEVICE T operator()(T, T src) const { return src; }
};
template <class T> struct ScatterAdd {
  T alpha;
  GR_HOST_DEVICE T operator()(T dst, T src) const { return static_cast<T>(dst + alpha * src); }
};
template <class T> struct ScatterMul {
  GR_HOST_DEVICE T operator()(T dst, T src) const { return static_cast<T>(dst * src); }
};

// What a CUDA read at an invalid index gives (Note [Index errors] in core/native/index/index_ops.h).
template <class T>
GR_HOST_DEVICE GR_INLINE T invalid_index_value() {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>)
    return T(static_cast<float>(NAN));
  else return T(0);
}

// Is an element nonzero (nonzero, masks)? NaN is.
template <class T>
GR_HOST_DEVICE GR_INLINE bool is_nonzero(T v) {
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) return static_cast<float>(v) != 0.0f;
  else return v != T(0);
}

}  // namespace gr::functors
