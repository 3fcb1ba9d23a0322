// Sparse linear maps along one dim ("taps"): what padding (reflect, replicate, circular) and
// interpolation (nearest, linear) do to each spatial dim, and their adjoints. See Note [Taps].
#pragma once

#include <vector>

#include "core/dispatch.h"
#include "core/functors.h"
#include "core/tensor.h"

namespace gr::native {

// Note [Taps]
// Reflect/replicate/circular padding and nearest/linear interpolation are separable: along
// each spatial dim, output o is a weighted sum of at most two inputs. A TapTable holds that
// map as a sparse matrix in rows (CSR): output row r sums weight[k] * input[index[k]] for k in
// [start[r], start[r + 1]). Its transpose is the map's adjoint, the backward, again a table of
// the same form: every kernel gathers (one thread per output element, no atomics), so CPU and
// CUDA give bit-identical, deterministic gradients, summed in ascending output order as torch's
// CPU scatter does. Multi-dim ops apply one table per dim, last dim first (bilinear's rounding
// order is then exactly torch's h0 * (w0 * a + w1 * b) + h1 * (...)).
struct TapTable {
  int64_t rows = 0, cols = 0;     // output and input length along the dim
  std::vector<int64_t> start{0};  // rows + 1 offsets into index/weight
  std::vector<int64_t> index;     // input positions, in [0, cols)
  std::vector<double> weight;     // exact in the dtype the table was made for

  void add(int64_t i, double w) { index.push_back(i), weight.push_back(w); }
  void end_row() { start.push_back(static_cast<int64_t>(index.size())), ++rows; }
};
TapTable transpose(const TapTable& t);

// out[a, r, b] of in [outer, cols, inner]: the row's weighted sum, in T.
template <class T>
GR_HOST_DEVICE GR_INLINE T taps_at(const T* in, const int64_t* start, const int64_t* index, const T* weight,
                                   int64_t cols, int64_t inner, int64_t a, int64_t r, int64_t b) {
  const T* x = in + a * cols * inner + b;
  T s = T(0);
  for (int64_t k = start[r]; k < start[r + 1]; ++k) s += weight[k] * x[index[k] * inner];
  return s;
}

// Kernel: in [outer, cols, inner] and out [outer, rows, inner] contiguous of dtype t;
// start/index (int64) and weight (dtype t) on the tensors' device.
struct TapsArgs {
  int64_t outer, rows, cols, inner;
};
using ApplyTapsFn = void (*)(const void* in, void* out, const int64_t* start, const int64_t* index, const void* weight,
                             const TapsArgs& a, ScalarType t);
GR_DECLARE_DISPATCH(ApplyTapsFn, apply_taps_stub);

// `input` with dim `dim` (of length t.cols) mapped through t (to length t.rows); no autograd.
Tensor apply_taps(const Tensor& input, int64_t dim, const TapTable& t);

}  // namespace gr::native
