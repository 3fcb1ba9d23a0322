// Dropout's CPU kernels: Philox blocks in parallel chunks (each chunk seeks to its own
// block, as in random.cpp, computing 16 blocks at a time), and the masked backward product.
#include "core/native/activation/dropout.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(DropoutFn, dropout_stub);
GR_DEFINE_DISPATCH(DropoutBackwardFn, dropout_backward_stub);

namespace {

// Philox4x32-10 for kLanes consecutive blocks (subsequence 0) at once: the same numbers as
// Philox4x32::next (core/philox.h), written over plain arrays so the compiler vectorises
// the rounds across blocks instead of running one serial chain per block.
constexpr int kLanes = 16;

// out[4 * l + k] = number k of block first_block + l: the element order of the stream.
// The lane loop is outermost with the rounds unrolled inside, so it vectorises.
inline void philox_lanes(uint64_t seed, uint64_t first_block, uint32_t* __restrict out) {
  const uint32_t key0 = static_cast<uint32_t>(seed), key1 = static_cast<uint32_t>(seed >> 32);
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t block = first_block + static_cast<uint64_t>(l);
    uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = key0, k1 = key1;
#pragma GCC unroll 10
    for (int round = 0; round < 10; ++round) {
      const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
      const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
      c0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
      c2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(p1);
      c3 = static_cast<uint32_t>(p0);
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[4 * l] = c0;
    out[4 * l + 1] = c1;
    out[4 * l + 2] = c2;
    out[4 * l + 3] = c3;
  }
}

// Keep flags and scaled products of n elements from their random numbers, without branches.
// The mask is written as bytes: GCC does not vectorise stores of bool.
template <class T>
inline void apply_dropout(const T* __restrict x, T* __restrict y, uint8_t* __restrict mask,
                          const uint32_t* __restrict random, int64_t n, uint32_t threshold, T scale) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t keep = dropout_keep(random[i], threshold) ? 1u : 0u;
    mask[i] = static_cast<uint8_t>(keep);
    y[i] = dropout_value(x[i], keep != 0, scale);
  }
}

template <class T>
void dropout_kernel(const T* in, T* out, bool* mask, int64_t n, const DropoutParams& params) {
  const DropoutParams p = params;
  const int64_t blocks = (n + 3) / 4;
  const int64_t groups = (blocks + kLanes - 1) / kLanes;
  const T scale = static_cast<T>(p.scale);
  // Chunks are whole lane groups, so each element's numbers never depend on the split.
  parallel_for(0, groups, 256, [&](int64_t g0, int64_t g1) {
    uint32_t random[4 * kLanes];
    for (int64_t grp = g0; grp < g1; ++grp) {
      philox_lanes(p.seed, p.offset + static_cast<uint64_t>(grp * kLanes), random);
      const int64_t base = grp * kLanes * 4, count = std::min<int64_t>(kLanes * 4, n - base);
      apply_dropout(in + base, out + base, reinterpret_cast<uint8_t*>(mask) + base, random, count, p.threshold, scale);
    }
  });
}

template <class T>
inline void apply_mask(const T* __restrict grad, const uint8_t* __restrict mask, T* __restrict grad_in, int64_t n,
                       T scale) {
  for (int64_t i = 0; i < n; ++i) grad_in[i] = dropout_value(grad[i], mask[i] != 0, scale);
}

template <class T>
void dropout_backward_kernel(const T* grad, const uint8_t* mask, T* grad_in, int64_t n, double scale) {
  const T s = static_cast<T>(scale);
  parallel_for(0, n, kGrainSize, [=](int64_t b, int64_t e) { apply_mask(grad + b, mask + b, grad_in + b, e - b, s); });
}

void dropout_cpu(const void* in, void* out, bool* mask, int64_t n, const DropoutParams& p, ScalarType t) {
  dispatch_floating(t, "dropout", [&]<class T>() {
    dropout_kernel(static_cast<const T*>(in), static_cast<T*>(out), mask, n, p);
  });
}

void dropout_backward_cpu(const void* grad, const bool* mask, void* grad_in, int64_t n, double scale, ScalarType t) {
  dispatch_floating(t, "dropout_backward", [&]<class T>() {
    dropout_backward_kernel(static_cast<const T*>(grad), reinterpret_cast<const uint8_t*>(mask), static_cast<T*>(grad_in), n, scale);
  });
}

}  // namespace

GR_REGISTER_KERNEL(dropout_stub, kCPU, &dropout_cpu);
GR_REGISTER_KERNEL(dropout_backward_stub, kCPU, &dropout_backward_cpu);

uint32_t dropout_threshold(double p) { return static_cast<uint32_t>(std::llround((1.0 - p) * 16777216.0)); }

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
  DropoutParams params{dropout_threshold(p), dropout_scale(p), g.seed(), g.reserve(static_cast<uint64_t>((n + 3) / 4))};
  if (n > 0)
    dropout_stub(input.device(), in.data_ptr(), out.data_ptr(), mask.data_ptr<bool>(), n, params,
                 input.scalar_type());
  return {out, mask};
}

Tensor dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  GR_CHECK(grad.sizes() == mask.sizes() && mask.scalar_type() == kBool, "dropout_backward: expected a bool mask of shape ",
           grad.sizes(), ", got ", mask.toString(), " ", mask.sizes());
  Tensor g = contiguous(grad), m = contiguous(mask);
  Tensor gi = empty(grad.sizes(), grad.options());
  if (gi.numel() > 0)
    dropout_backward_stub(grad.device(), g.data_ptr(), m.data_ptr<bool>(), gi.data_ptr(), gi.numel(), scale,
                          grad.scalar_type());
  return gi;
}

}  // namespace gr::native
