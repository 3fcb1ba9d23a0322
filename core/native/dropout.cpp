// Dropout's CPU kernels: Philox blocks in parallel chunks (each chunk seeks to its own
// block, as in random.cpp), and the masked backward product.
#include "core/native/dropout.h"

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(DropoutFn, dropout_stub);
GR_DEFINE_DISPATCH(DropoutBackwardFn, dropout_backward_stub);

namespace {

template <class T>
void dropout_kernel(const T* in, T* out, bool* mask, int64_t n, const DropoutParams& p) {
  const int64_t blocks = (n + 3) / 4;
  const T scale = static_cast<T>(p.scale);
  parallel_for(0, blocks, 2048, [&](int64_t b0, int64_t b1) {
    Philox4x32 rng(p.seed, 0, p.offset + static_cast<uint64_t>(b0));
    for (int64_t b = b0; b < b1; ++b) {
      uint32_t r[4];
      rng.next(r);
      const int64_t base = b * 4, end = std::min<int64_t>(base + 4, n);
      for (int64_t i = base; i < end; ++i) {
        const bool keep = dropout_keep(r[i - base], p.p);
        mask[i] = keep;
        out[i] = in[i] * (keep ? scale : T(0));
      }
    }
  });
}

template <class T>
void dropout_backward_kernel(const T* grad, const bool* mask, T* grad_in, int64_t n, double scale) {
  const T s = static_cast<T>(scale);
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) grad_in[i] = grad[i] * (mask[i] ? s : T(0));
  });
}

void dropout_cpu(const void* in, void* out, bool* mask, int64_t n, const DropoutParams& p, ScalarType t) {
  dispatch_floating(t, "dropout", [&]<class T>() {
    dropout_kernel(static_cast<const T*>(in), static_cast<T*>(out), mask, n, p);
  });
}

void dropout_backward_cpu(const void* grad, const bool* mask, void* grad_in, int64_t n, double scale, ScalarType t) {
  dispatch_floating(t, "dropout_backward", [&]<class T>() {
    dropout_backward_kernel(static_cast<const T*>(grad), mask, static_cast<T*>(grad_in), n, scale);
  });
}

}  // namespace

GR_REGISTER_KERNEL(dropout_stub, kCPU, &dropout_cpu);
GR_REGISTER_KERNEL(dropout_backward_stub, kCPU, &dropout_backward_cpu);

std::pair<Tensor, Tensor> dropout(const Tensor& input, double p, Generator* gen) {
  GR_CHECK(input.defined(), "dropout: input is undefined");
  GR_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability has to be between 0 and 1, but got ", p);
  GR_CHECK(input.scalar_type() == kFloat32 || input.scalar_type() == kFloat64,
           "dropout: expected a float32 or float64 input, got ", input.scalar_type());
  Tensor in = contiguous(input);
  Tensor out = empty(input.sizes(), input.options());
  Tensor mask = empty(input.sizes(), TensorOptions(kBool).device(input.device()));
  Generator& g = gen ? *gen : default_generator();
  const int64_t n = input.numel();
  DropoutParams params{static_cast<float>(p), dropout_scale(p), g.seed(), g.reserve(static_cast<uint64_t>((n + 3) / 4))};
  if (n > 0)
    dropout_stub(input.device().type, in.data_ptr(), out.data_ptr(), mask.data_ptr<bool>(), n, params,
                 input.scalar_type());
  return {out, mask};
}

Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  GR_CHECK(grad.sizes() == mask.sizes() && mask.scalar_type() == kBool, "dropout_backward: expected a bool mask of shape ",
           grad.sizes(), ", got ", mask.toString(), " ", mask.sizes());
  Tensor g = contiguous(grad), m = contiguous(mask);
  Tensor gi = empty(grad.sizes(), grad.options());
  if (gi.numel() > 0)
    dropout_backward_stub(grad.device().type, g.data_ptr(), m.data_ptr<bool>(), gi.data_ptr(), gi.numel(), scale,
                          grad.scalar_type());
  return gi;
}

}  // namespace gr::native
