// Tensor's non-differentiable methods: comparisons, argmax, equal and allclose.
#include <cmath>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"

namespace gr {

#define GR_COMPARISON_METHODS(name)                                                                  \
  Tensor Tensor::name(const Tensor& o) const { return native::name(*this, o); }                     \
  Tensor Tensor::name(const Scalar& o) const { return native::name(*this, native::wrapped_scalar(*this, o)); }
GR_COMPARISON_METHODS(eq)
GR_COMPARISON_METHODS(ne)
GR_COMPARISON_METHODS(gt)
GR_COMPARISON_METHODS(lt)
GR_COMPARISON_METHODS(ge)
GR_COMPARISON_METHODS(le)
#undef GR_COMPARISON_METHODS

Tensor Tensor::argmax() const { return native::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return native::argmax(*this, dim, keepdim); }

bool Tensor::equal(const Tensor& o) const {
  if (sizes() != o.sizes() || scalar_type() != o.scalar_type()) return false;
  if (numel() == 0) return true;
  return native::sum(native::ne(*this, o)).item<int64_t>() == 0;
}

bool Tensor::allclose(const Tensor& o, double rtol, double atol) const {
  GR_CHECK(sizes() == o.sizes(), "allclose: shapes ", sizes(), " and ", o.sizes(), " differ");
  Tensor a = native::contiguous(native::to_device(native::to_dtype(*this, kFloat64), Device(kCPU)));
  Tensor b = native::contiguous(native::to_device(native::to_dtype(o, kFloat64), Device(kCPU)));
  const double *pa = a.data_ptr<double>(), *pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (pa[i] == pb[i]) continue;  // also equal infinities
    // Otherwise a NaN or an infinity never matches, as in torch.isclose: with an infinite
    // reference, atol + rtol * |b| would be infinite and accept any value.
    if (!std::isfinite(pa[i]) || !std::isfinite(pb[i])) return false;
    if (!(std::abs(pa[i] - pb[i]) <= atol + rtol * std::abs(pb[i]))) return false;
  }
  return true;
}

}  // namespace gr
