// Multinomial sampling kernels (CPU here, CUDA in cuda_kernels/multinomial.cu): the random
// numbers come in as tensors drawn from the Philox stream, so both devices pick alike.
#pragma once

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/tensor.h"

namespace gr::native {

// With replacement. p [N, C] float64 non-negative weights (rows with a positive sum), u [N, S]
// float64 uniforms in [0, 1); out [N, S] int64: for each u the first category whose running
// sum of weights exceeds u * (row sum), as inverting the row's distribution function. All
// contiguous.
using SampleCdfFn = void (*)(const Tensor& p, const Tensor& u, const Tensor& out);
GR_DECLARE_DISPATCH(SampleCdfFn, multinomial_with_replacement_stub);
// Without replacement. keys [N, C] float64; out [N, K] int64: the indices of each row's K
// largest keys, largest first (equal keys: lower index first). All contiguous.
using TopKeysFn = void (*)(const Tensor& keys, const Tensor& out);
GR_DECLARE_DISPATCH(TopKeysFn, multinomial_top_keys_stub);

// Does key (v, i) come before (best, best_i) in the order of multinomial_top_keys_stub?
GR_HOST_DEVICE GR_INLINE bool key_before(double v, int64_t i, double best, int64_t best_i) {
  return v > best || (v == best && i < best_i);
}

// The category for target t in a row's running sums cdf[0, C): the first c with cdf[c] > t,
// or `last` (the last category with positive weight) when rounding puts t at the total.
GR_HOST_DEVICE GR_INLINE int64_t cdf_search(const double* cdf, int64_t C, double t, int64_t last) {
  int64_t lo = 0, hi = C;  // the answer is in [lo, hi]
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo < C ? lo : last;
}

}  // namespace gr::native
