// Tensor::equal and Tensor::allclose: comparisons of whole tensors, defined in core (any two
// dtypes compare, as doubles; see math_ops.def for the gr:: functions).
#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/reduce/reduce.h"

namespace gr {

bool Tensor::equal(const Tensor& o) const {
  if (sizes() != o.sizes() || scalar_type() != o.scalar_type()) return false;
  if (numel() == 0) return true;
  return native::sum(native::ne(*this, o)).item<int64_t>() == 0;
}

bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  GR_CHECK(sizes() == o.sizes(), "allclose: shapes ", sizes(), " and ", o.sizes(), " differ");
  Tensor a = native::contiguous(native::to_device(native::to_dtype(*this, kFloat64), Device(kCPU)));
  Tensor b = native::contiguous(native::to_device(native::to_dtype(o, kFloat64), Device(kCPU)));
  const double *pa = a.data_ptr<double>(), *pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (pa[i] == pb[i]) continue;  // also equal infinities
    if (equal_nan && std::isnan(pa[i]) && std::isnan(pb[i])) continue;
    // Otherwise a NaN or an infinity never matches, as in torch.isclose: with an infinite
    // reference, atol + rtol * |b| would be infinite and accept any value.
    if (!std::isfinite(pa[i]) || !std::isfinite(pb[i])) return false;
    if (!(std::abs(pa[i] - pb[i]) <= atol + rtol * std::abs(pb[i]))) return false;
  }
  return true;
}

}  // namespace gr
