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
  if (kind == RandomKind::Integer) return 2;
  if (kind == RandomKind::Bernoulli) return 4;  // 24-bit uniforms for every dtype
  return dtype == kFloat64 ? 2 : 4;
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
  dispatch_all(out.scalar_type(), "random",
               [&]<class T>() { random_fill_cpu(out.data_ptr<T>(), out.numel(), p, per_block); });
}
GR_REGISTER_KERNEL(random_stub, kCPU, &random_cpu);

static void fill_random(const Tensor& out, RandomParams p, Generator* gen) {
  if (out.numel() == 0) return;
  Tensor target = out.is_contiguous() ? out : empty(out.sizes(), out.options());
  Generator& g = gen ? *gen : default_generator();
  const int64_t per_block = random_values_per_block(p.kind, out.scalar_type());
  p.seed = g.seed();
  p.offset = g.reserve(static_cast<uint64_t>((out.numel() + per_block - 1) / per_block));
  random_stub(out.device(), target, p);
  if (!target.is_same(out)) copy_(out, target);
  else out.unsafe_impl()->storage.bump_version();
}

void random_(const Tensor& out, RandomKind kind, double a, double b, Generator* gen) {
  if (kind == RandomKind::Integer) {
    // Integers in [a, b): the one fill that RandomParams' a and b cannot carry (the kernels
    // draw low + bits % range in int64), so it routes to random_integers_ on every device.
    // A double holds every integer up to 2^53 exactly; wider bounds need random_integers_.
    constexpr double kExact = 9007199254740992.0;  // 2^53
    GR_CHECK(a == std::floor(a) && b == std::floor(b) && std::fabs(a) <= kExact && std::fabs(b) <= kExact && a < b,
             "random: an integer fill needs integer bounds low < high within +-2^53, got [", a, ", ", b, ")");
    const auto low = static_cast<int64_t>(a), high = static_cast<int64_t>(b);
    return random_integers_(out, low, static_cast<uint64_t>(high - low), gen);
  }
  fill_random(out, RandomParams{kind, 0, 0, a, b}, gen);
}

void random_integers_(const Tensor& out, int64_t low, uint64_t range, Generator* gen) {
  GR_CHECK(range > 0, "random: internal: empty range");
  RandomParams p{RandomKind::Integer, 0, 0};
  p.low = low;
  p.range = range;
  fill_random(out, p, gen);
}

}  // namespace gr::native

namespace gr {

static Tensor random_tensor(IntArrayRef sizes, TensorOptions options, native::RandomKind kind, double a, double b,
                            Generator* gen, const char* op) {
  GR_CHECK(is_floating_point(options.dtype()), op, ": expected a floating point dtype, got ", options.dtype());
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
  GR_CHECK(options.dtype() != kBool, "randint: bool is not supported (as torch's 'check_random_bounds')");
  Tensor t = empty(sizes, options.requires_grad(false));
  native::random_integers_(t, low, static_cast<uint64_t>(high) - static_cast<uint64_t>(low), gen);
  if (options.requires_grad()) t.set_requires_grad(true);
  return t;
}
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options, Generator* gen) {
  return randint(0, high, sizes, options, gen);
}
Tensor randn_like(const Tensor& t, Generator* gen) { return randn(t.sizes(), t.options(), gen); }
Tensor rand_like(const Tensor& t, Generator* gen) { return rand(t.sizes(), t.options(), gen); }

Tensor randperm(int64_t n, Generator* gen) {
  GR_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  // Keys are 63-bit numbers (the range 2^63; a uniform key is what the swaps need).
  Tensor keys = empty({n}, kInt64);
  native::random_integers_(keys, 0, uint64_t{1} << 63, gen);
  Tensor out = empty({n}, kInt64);
  int64_t* p = out.data_ptr<int64_t>();
  const int64_t* k = keys.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  // Fisher-Yates with the pre-drawn numbers: j uniform in [0, i].
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[static_cast<uint64_t>(k[i]) % static_cast<uint64_t>(i + 1)]);
  return out;
}

}  // namespace gr
