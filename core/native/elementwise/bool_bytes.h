// How the CPU kernels read bool tensors: as bytes (See Note [Bools read as bytes]).
// Included by CPU kernel files only.
#pragma once

#include <cstdint>
#include <type_traits>

namespace gr::native {

// Note [Bools read as bytes]
// GCC 12 vectorises no loop that selects on, or counts, a bool loaded from memory (a bool
// load is a byte the compiler may assume to be 0 or 1, and its vectoriser gives up on that
// assumption): where(cond, a, b) and masked_fill were a branch per element, 17-18 ms over
// [4096, 1024] floats with a random mask (PyTorch 2.15's where: 17 ms, the same problem).
// Loaded as a byte and converted (b != 0, the same value for every valid bool), the same
// loops vectorise. The CPU loops (cpu_map, the reductions, the masks' scans) therefore read
// every bool through stored_t; stores of bool vectorise as they are. 1 thread, load 4-5:
// masked_fill 18 -> 1.1-1.3 ms, where 17.2 -> 1.9-2.2 ms, where(cond, x, 0.0) 18.3 -> 1.2 ms
// (with cpu_map's contiguous path for a 0-d third operand), any over bool rows 3.7 -> 0.07 ms
// (Note [Byte folds]); logical_and of bools and x < 0.5 vectorised already.
template <class T>
using stored_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Element j of a T array, read through stored_t.
template <class T>
inline T load_stored(const void* p, int64_t j) {
  return static_cast<T>(static_cast<const stored_t<T>*>(p)[j]);
}

}  // namespace gr::native
