// softmax/log_softmax: max-subtracted, accumulated in double, one pass per row or column
// (the per-element arithmetic is in softmax.h, shared with cuda_kernels/softmax.cu).
#include "core/native/softmax.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(SoftmaxFn, softmax_stub);
GR_DEFINE_DISPATCH(SoftmaxBackwardFn, softmax_backward_stub);

namespace {

struct Layout {
  int64_t outer = 1, R = 1, inner = 1;
};

Layout layout_of(const Tensor& x, int64_t d) {
  Layout l;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) l.outer *= x.size(i);
    else if (i == d) l.R = x.size(i);
    else l.inner *= x.size(i);
  }
  return l;
}

template <class T>
void softmax_kernel(const T* in, T* out, int64_t outer, int64_t R, int64_t inner, bool log) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t base = (k / inner) * R * inner + k % inner;
      softmax_row(in + base, out + base, R, inner, log);
    }
  });
}

template <class T>
void softmax_backward_kernel(const T* grad, const T* out, T* gin, int64_t outer, int64_t R, int64_t inner, bool log) {
  parallel_for(0, outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t base = (k / inner) * R * inner + k % inner;
      softmax_backward_row(grad + base, out + base, gin + base, R, inner, log);
    }
  });
}

void softmax_cpu(const void* in, void* out, int64_t outer, int64_t R, int64_t inner, ScalarType t, bool log) {
  dispatch_floating(t, "softmax", [&]<class T>() {
    softmax_kernel(static_cast<const T*>(in), static_cast<T*>(out), outer, R, inner, log);
  });
}
void softmax_backward_cpu(const void* g, const void* y, void* gi, int64_t outer, int64_t R, int64_t inner, ScalarType t,
                          bool log) {
  dispatch_floating(t, "softmax_backward", [&]<class T>() {
    softmax_backward_kernel(static_cast<const T*>(g), static_cast<const T*>(y), static_cast<T*>(gi), outer, R, inner, log);
  });
}

}  // namespace

GR_REGISTER_KERNEL(softmax_stub, kCPU, &softmax_cpu);
GR_REGISTER_KERNEL(softmax_backward_stub, kCPU, &softmax_backward_cpu);

Tensor softmax(const Tensor& x, int64_t dim, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  GR_CHECK(x.is_floating_point(), op, ": expected a floating point tensor, got ", x.scalar_type());
  if (is_reduced_float(x.scalar_type()))  // Note [Reduced float math]
    return to_dtype(softmax(to_dtype(x, kFloat32), dim, log), x.scalar_type());
  int64_t d = wrap_dim(dim, x.dim(), op);
  Tensor in = contiguous(x);
  Tensor out = empty(x.sizes(), x.options());
  if (x.numel() == 0) return out;
  Layout l = layout_of(x, d);
  softmax_stub(x.device(), in.data_ptr(), out.data_ptr(), l.outer, l.R, l.inner, x.scalar_type(), log);
  return out;
}

Tensor softmax_backward(const Tensor& grad, const Tensor& out, int64_t dim, bool log) {
  if (is_reduced_float(out.scalar_type()))  // Note [Reduced float math]
    return to_dtype(softmax_backward(to_dtype(grad, kFloat32), to_dtype(out, kFloat32), dim, log), out.scalar_type());
  int64_t d = wrap_dim(dim, out.dim(), "softmax_backward");
  Tensor g = contiguous(grad), y = contiguous(out);
  Tensor gin = empty(out.sizes(), out.options());
  if (out.numel() == 0) return gin;
  Layout l = layout_of(out, d);
  softmax_backward_stub(out.device(), g.data_ptr(), y.data_ptr(), gin.data_ptr(), l.outer, l.R, l.inner,
                        out.scalar_type(), log);
  return gin;
}

}  // namespace gr::native
