// Tap tables (Note [Taps]): the transpose, the tensor-level apply, and the CPU kernel,
// parallel over (outer, row) lines with the inner dim contiguous.
#include "core/native/shape/resample.h"

#include <algorithm>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/parallel.h"
#include "core/tensor_literal.h"

namespace gr::native {

GR_DEFINE_DISPATCH(ApplyTapsFn, apply_taps_stub);

TapTable transpose(const TapTable& t) {
  TapTable out;
  out.rows = t.cols;
  out.cols = t.rows;
  out.start.assign(t.cols + 1, 0);
  for (int64_t i : t.index) ++out.start[i + 1];
  for (int64_t c = 0; c < t.cols; ++c) out.start[c + 1] += out.start[c];
  out.index.resize(t.index.size());
  out.weight.resize(t.weight.size());
  std::vector<int64_t> next(out.start.begin(), out.start.end() - 1);
  for (int64_t r = 0; r < t.rows; ++r)  // ascending r: each input's row lists its outputs in order
    for (int64_t k = t.start[r]; k < t.start[r + 1]; ++k) {
      const int64_t at = next[t.index[k]]++;
      out.index[at] = r;
      out.weight[at] = t.weight[k];
    }
  return out;
}

Tensor apply_taps(const Tensor& input, int64_t dim, const TapTable& t) {
  GR_CHECK(input.size(dim) == t.cols, "apply_taps: dim ", dim, " of input ", input.sizes(), " is not ", t.cols);
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes[dim] = t.rows;
  Tensor out = empty(sizes, input.options());
  if (out.numel() == 0) return out;
  if (input.numel() == 0) {  // an empty table (cols == 0) maps to zeros
    fill_(out, 0);
    return out;
  }
  TapsArgs a{1, t.rows, t.cols, 1};
  for (int64_t d = 0; d < dim; ++d) a.outer *= sizes[d];
  for (int64_t d = dim + 1; d < input.dim(); ++d) a.inner *= sizes[d];
  const TensorOptions index_options = TensorOptions(kInt64).device(input.device());
  Tensor start = to_device(tensor(t.start, TensorOptions(kInt64)), input.device());
  Tensor index =
      t.index.empty() ? empty({0}, index_options) : to_device(tensor(t.index, TensorOptions(kInt64)), input.device());
  Tensor weight = t.weight.empty() ? empty({0}, input.options())
                                   : to_device(to_dtype(tensor(t.weight, TensorOptions(kFloat64)), input.scalar_type()),
                                               input.device());
  Tensor in = contiguous(input);
  apply_taps_stub(input.device(), in.data_ptr(), out.data_ptr(), start.data_ptr<int64_t>(), index.data_ptr<int64_t>(),
                  weight.data_ptr(), a, input.scalar_type());
  return out;
}

namespace {

void apply_taps_cpu(const void* in, void* out, const int64_t* start, const int64_t* index, const void* weight,
                    const TapsArgs& a, ScalarType t) {
  dispatch_floating(t, "apply_taps", [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    const T* w = static_cast<const T*>(weight);
    T* y = static_cast<T*>(out);
    const int64_t per_line = std::max<int64_t>(1, a.inner * 2);
    parallel_for(0, a.outer * a.rows, std::max<int64_t>(1, kGrainSize / per_line), [&](int64_t l0, int64_t l1) {
      for (int64_t l = l0; l < l1; ++l) {
        const int64_t o = l / a.rows, r = l % a.rows;
        T* line = y + l * a.inner;
        for (int64_t b = 0; b < a.inner; ++b) line[b] = taps_at(x, start, index, w, a.cols, a.inner, o, r, b);
      }
    });
  });
}

}  // namespace

GR_REGISTER_KERNEL(apply_taps_stub, kCPU, &apply_taps_cpu);

}  // namespace gr::native
