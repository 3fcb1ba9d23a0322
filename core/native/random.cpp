// Random tensor creation and the CPU Philox fill kernel (the per-block arithmetic is
// random.h's, shared with cuda_kernels/random.cu).
#include "core/native/random.h"

#include <cmath>

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/parallel.h"
#include "core/philox.h"

namespace gr::native {

GR_DEFINE_DISPATCH(RandomFn, random_stub);

int64_t random_values_per_block(RandomKind kind, ScalarType dtype) {
  if (kind == RandomKind::Integer || dtype == kFloat64) return 2;
  return 4;
}

template <class T>
static void random_fill_cpu(T* out, int64_t n, const RandomParams& p, int64_t per_block) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  parallel_for(0, blocks, 2048, [&](int64_t b0, int64_t b1) {
    Philox4x32 rng(p.seed, 0, p.offset + static_cast<uint64_t>(b0));
    for (int64_t b = b0; b < b1; ++b) {
      uint32_t r[4];
      rng.next(r);
      random_block_values(p, per_block, r, out + b * per_block, n - b * per_block);
    }
  });
}

static void random_cpu(const Tensor& out, const RandomParams& p) {
  int64_t per_block = random_values_per_block(p.kind, out.scalar_type());
  switch (out.scalar_type()) {
    case kFloat32: return random_fill_cpu(out.data_ptr<float>(), out.numel(), p, per_block);
    case kFloat64: return random_fill_cpu(out.data_ptr<double>(), out.numel(), p, per_block);
    case kInt64: return random_fill_cpu(out.data_ptr<int64_t>(), out.numel(), p, per_block);
    case kUInt8: return random_fill_cpu(out.data_ptr<uint8_t>(), out.numel(), p, per_block);
    default: GR_ERROR("random: dtype ", out.scalar_type(), " is not supported");
  }
}
GR_REGISTER_KERNEL(random_stub, kCPU, &random_cpu);

void random_(const Tensor& out, RandomKind kind, double a, double b, Generator* gen) {
  GR_CHECK(out.is_contiguous(), "random: output must be contiguous");
  Generator& g = gen ? *gen : default_generator();
  int64_t per_block = random_values_per_block(kind, out.scalar_type());
  uint64_t blocks = static_cast<uint64_t>((out.numel() + per_block - 1) / per_block);
  RandomParams p{kind, g.seed(), g.reserve(blocks), a, b};
  if (out.numel() > 0) random_stub(out.device(), out, p);
}

}  // namespace gr::native

namespace gr {

static Tensor random_tensor(IntArrayRef sizes, TensorOptions options, native::RandomKind kind, double a, double b,
                            Generator* gen, const char* op) {
  GR_CHECK(kind == native::RandomKind::Integer || is_floating_point(options.dtype()), op,
           ": expected a floating point dtype, got ", options.dtype());
  Tensor t = empty(sizes, options.requires_grad(false));
  native::random_(t, kind, a, b, gen);
  if (options.requires_grad()) t.set_requires_grad(true);
  return t;
}

Tensor randn(IntArrayRef sizes, TensorOptions options, Generator* gen) {
  return random_tensor(sizes, options, native::RandomKind::Normal, 0, 1, gen, "randn");
}
Tensor randn(IntArrayRef sizes, Generator* gen, TensorOptions options) { return randn(sizes, options, gen); }
Tensor rand(IntArrayRef sizes, TensorOptions options, Generator* gen) {
  return random_tensor(sizes, options, native::RandomKind::Uniform, 0, 1, gen, "rand");
}
Tensor rand(IntArrayRef sizes, Generator* gen, TensorOptions options) { return rand(sizes, options, gen); }
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options, Generator* gen) {
  GR_CHECK(high > low, "randint: expected low < high, got low=", low, " high=", high);
  return random_tensor(sizes, options, native::RandomKind::Integer, static_cast<double>(low),
                       static_cast<double>(high), gen, "randint");
}
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options, Generator* gen) {
  return randint(0, high, sizes, options, gen);
}
Tensor randn_like(const Tensor& t, Generator* gen) { return randn(t.sizes(), t.options(), gen); }
Tensor rand_like(const Tensor& t, Generator* gen) { return rand(t.sizes(), t.options(), gen); }

Tensor randperm(int64_t n, Generator* gen) {
  GR_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  Tensor keys = randint(0, std::numeric_limits<int64_t>::max(), {n}, kInt64, gen);
  Tensor out = empty({n}, kInt64);
  int64_t* p = out.data_ptr<int64_t>();
  const int64_t* k = keys.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  // Fisher-Yates with the pre-drawn numbers: j uniform in [0, i].
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[static_cast<uint64_t>(k[i]) % static_cast<uint64_t>(i + 1)]);
  return out;
}

}  // namespace gr
