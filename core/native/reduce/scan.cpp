// cumsum/cumprod: layout, result dtype, and the CPU kernel (the running accumulator of
// core/reduce_functors.h, in acc_t: float32 in double, as PyTorch's CPU scans). Rows run one
// after another element by element; with inner > 1 a tile of neighbouring columns advances
// together, which vectorises.
#include "core/native/reduce/scan.h"

#include <algorithm>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/reduce/reduce.h"
#include "core/parallel.h"
#include "core/reduce_functors.h"

namespace gr::native {

GR_DEFINE_DISPATCH(ScanFn, cumsum_stub);
GR_DEFINE_DISPATCH(ScanFn, cumprod_stub);

namespace {

namespace ops = gr::reduce_ops;
constexpr int64_t kTile = 128;

template <class In, class Out, class Op>
void scan_kernel(const Op& op, const In* in, Out* out, int64_t outer, int64_t R, int64_t inner, bool reverse) {
  using Acc = decltype(op.identity());
  const functors::Convert<Out, Acc> cvt;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * std::min(inner, kTile), 1)),
               [&](int64_t b, int64_t e) {
                 Acc acc[kTile];
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t o = t / tiles, j0 = (t % tiles) * kTile, m = std::min(kTile, inner - j0);
                   for (int64_t j = 0; j < m; ++j) acc[j] = op.identity();
                   for (int64_t s = 0; s < R; ++s) {
                     const int64_t r = reverse ? R - 1 - s : s, base = (o * R + r) * inner + j0;
                     for (int64_t j = 0; j < m; ++j) {
                       acc[j] = op.reduce(acc[j], static_cast<ops::value_t<In>>(in[base + j]));
                       out[base + j] = cvt(acc[j]);
                     }
                   }
                 }
               });
}

template <template <class> class Op>
void scan_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool reverse) {
  dispatch_all(t, "cumsum/cumprod", [&]<class In>() {
    using Out = ops::sum_out_t<In>;
    scan_kernel(Op<ops::acc_t<In>>{}, static_cast<const In*>(in), static_cast<Out*>(out), outer, R, inner, reverse);
  });
}

Tensor scan(const DispatchStub<ScanFn>& stub, const char* op, const Tensor& x, int64_t dim,
            std::optional<ScalarType> dtype, bool reverse) {
  GR_CHECK(x.defined(), op, ": undefined tensor argument");
  const int64_t d = wrap_dim(dim, x.dim(), op);
  Tensor in = contiguous(dtype ? to_dtype(x, *dtype) : x);
  Tensor out = empty(x.sizes(), TensorOptions(sum_result_type(in.scalar_type(), std::nullopt)).device(x.device()));
  if (out.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  stub(x.device(), in.data_ptr(), out.data_ptr(), outer, x.dim() ? x.size(d) : 1, inner, in.scalar_type(), reverse);
  return out;
}

}  // namespace

GR_REGISTER_KERNEL(cumsum_stub, kCPU, &scan_cpu<ops::Sum>);
GR_REGISTER_KERNEL(cumprod_stub, kCPU, &scan_cpu<ops::Prod>);

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype, bool reverse) {
  return scan(cumsum_stub, "cumsum", x, dim, dtype, reverse);
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype, bool reverse) {
  return scan(cumprod_stub, "cumprod", x, dim, dtype, reverse);
}

}  // namespace gr::native
