// scaled_dot_product_attention: the fused kernel against the unfused composite (matmul,
// softmax, dropout) in float64, forward and backward, with masks, causal, dropout, batch
// broadcasting and sizes off the tile grid; fully masked rows; error messages; memory that
// grows linearly in the sequence length.
#include <atomic>
#include <cmath>

#include "core/native/attention.h"
#include "core/native/gemm_packed.h"
#include "test_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::error_of;

namespace {

Tensor randn_of(std::vector<int64_t> shape, uint64_t seed, ScalarType t = kFloat64) {
  Generator g(seed);
  return randn(shape, TensorOptions(kFloat64), &g).to(t);  // the same values in either dtype
}

// The unfused reference: softmax(q k^T * scale + mask) (dropped out) @ v from gr:: ops.
Tensor reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p, bool causal,
                 std::optional<double> scale) {
  const int64_t L = q.size(-2), S = k.size(-2);
  Tensor s = matmul(q, k.transpose(-2, -1)) * (scale ? *scale : 1.0 / std::sqrt(double(q.size(-1))));
  if (causal) s = s.masked_fill(ones({L, S}, TensorOptions(kFloat64)).triu(1).gt(0), -INFINITY);
  if (mask.defined()) s = mask.scalar_type() == kBool ? s.masked_fill(logical_not(mask), -INFINITY) : s + mask;
  Tensor w = softmax(s, -1);
  if (p > 0) w = dropout(w, p, true);
  return matmul(w, v);
}

struct Case {
  std::string name;
  std::vector<int64_t> q, k, v;
  int mask = 0;  // 0 none, 1 bool, 2 float
  std::vector<int64_t> mask_shape = {};
  bool causal = false;
  double p = 0;
  std::optional<double> scale = std::nullopt;
};

// Output and the three input gradients for a seeded upstream gradient; `fused` picks the op.
TensorList run(const Case& c, ScalarType t, bool fused) {
  Tensor q = randn_of(c.q, 1, t).requires_grad_(true), k = randn_of(c.k, 2, t).requires_grad_(true);
  Tensor v = randn_of(c.v, 3, t).requires_grad_(true);
  Tensor mask;
  if (c.mask == 1) {
    Generator g(4);
    mask = rand(c.mask_shape, TensorOptions(kFloat64), &g).gt(0.3);
    // Key 0 stays visible to every query, so the reference's softmax has no all-masked row.
    mask = mask.index_fill(-1, tensor({int64_t(0)}, TensorOptions(kInt64)), true);
  } else if (c.mask == 2) {
    mask = randn_of(c.mask_shape, 5, t);
  }
  manual_seed(99);
  Tensor out = fused ? scaled_dot_product_attention(q, k, v, mask, c.p, c.causal, c.scale)
                     : reference(q, k, v, mask, c.p, c.causal, c.scale);
  out.backward(randn_of(out.sizes().vec(), 6, t));
  return {out.detach(), q.grad(), k.grad(), v.grad()};
}

const std::vector<Case>& cases() {
  static const std::vector<Case> list = {
      {"plain, L != S, odd sizes", {2, 3, 50, 7}, {2, 3, 101, 7}, {2, 3, 101, 5}},
      {"several tiles each way", {1, 2, 130, 16}, {1, 2, 200, 16}, {1, 2, 200, 33}},
      {"causal, L == S", {2, 2, 130, 8}, {2, 2, 130, 8}, {2, 2, 130, 8}, 0, {}, true},
      {"causal, short (train_gpt's tiny: narrow key tiles)", {2, 2, 64, 32}, {2, 2, 64, 32}, {2, 2, 64, 32}, 0, {}, true},
      {"causal, L < S", {2, 37, 8}, {2, 100, 8}, {2, 100, 8}, 0, {}, true},
      {"causal, L > S", {1, 150, 8}, {1, 60, 8}, {1, 60, 4}, 0, {}, true},
      {"bool mask [L, S]", {2, 3, 50, 8}, {2, 3, 101, 8}, {2, 3, 101, 8}, 1, {50, 101}},
      {"bool mask [B, 1, L, S]", {2, 3, 50, 8}, {2, 3, 101, 8}, {2, 3, 101, 8}, 1, {2, 1, 50, 101}},
      {"float mask [B, H, L, S]", {2, 3, 50, 8}, {2, 3, 101, 8}, {2, 3, 101, 6}, 2, {2, 3, 50, 101}},
      {"float mask [1, L, S], scale", {2, 60, 8}, {2, 70, 8}, {2, 70, 8}, 2, {1, 60, 70}, false, 0, 0.3},
      {"dropout", {2, 2, 50, 8}, {2, 2, 101, 8}, {2, 2, 101, 8}, 0, {}, false, 0.3},
      {"dropout, causal", {1, 2, 100, 8}, {1, 2, 100, 8}, {1, 2, 100, 8}, 0, {}, true, 0.5},
      {"dropout, bool mask", {2, 40, 8}, {2, 99, 8}, {2, 99, 8}, 1, {40, 99}, false, 0.2},
      {"broadcast batch dims", {2, 3, 20, 8}, {1, 3, 30, 8}, {30, 8}},
      {"one query, one key", {1, 1, 3}, {1, 1, 3}, {1, 1, 2}},
  };
  return list;
}

}  // namespace

TEST_CASE("scaled_dot_product_attention equals the unfused composite in float64, forward and backward") {
  for (const Case& c : cases()) {
    INFO("case: ", c.name);
    TensorList fused = run(c, kFloat64, true), ref = run(c, kFloat64, false);
    for (size_t i = 0; i < fused.size(); ++i) check_close(fused[i], ref[i], 1e-10);
  }
}

TEST_CASE("scaled_dot_product_attention in bfloat16 on the CPU: the float32 computation within bfloat16's error") {
  // The kernel reads bfloat16 operands (and a bfloat16 float mask) where they lie and rounds
  // what it stores. Where the CPU has AVX512_BF16 and the widths are even, its tile products
  // multiply bfloat16 pairs, the weights P and their gradients dS rounded to bfloat16 first
  // (Note [Attention tile policies]): then it is within bfloat16's error of the float32 kernel
  // on the same values. Otherwise it multiplies in float32: bitwise that kernel, rounded.
  for (const Case& c : cases()) {
    if (c.name == "broadcast batch dims") continue;  // sums gradients over the batch after rounding
    INFO("case: ", c.name);
    const bool pairs = native::bf16_pair_products() && c.q.back() % 2 == 0 && c.v.back() % 2 == 0;
    auto draw = [&](std::vector<int64_t> shape, uint64_t seed) { return randn_of(shape, seed, kBFloat16); };
    Tensor q = draw(c.q, 1), k = draw(c.k, 2), v = draw(c.v, 3), mask;
    if (c.mask == 1) mask = draw(c.mask_shape, 4).gt(-0.5);
    if (c.mask == 2) mask = draw(c.mask_shape, 5);
    auto f32 = [](const Tensor& t) { return t.defined() && t.scalar_type() == kBFloat16 ? t.to(kFloat32) : t; };
    // max |a - b| over max |b|, and bitwise equality where no pairs are multiplied.
    auto check_same = [&](const Tensor& got, const Tensor& ref, double tol) {
      if (!pairs) {
        CHECK(equal(got, ref.to(got.scalar_type())));
        return;
      }
      const double scale = ref.abs().max().item<double>();
      const double err = test::max_abs_diff(got, ref);
      CAPTURE(err / scale);  // seen: 1.6e-3 to 2.9e-3 for out, 1.8e-3 to 3.7e-3 for the gradients
      CHECK(err <= tol * scale);
    };
    manual_seed(99);
    native::AttentionSaved s16 = native::scaled_dot_product_attention(q, k, v, mask, c.p, c.causal, c.scale);
    manual_seed(99);
    native::AttentionSaved s32 =
        native::scaled_dot_product_attention(f32(q), f32(k), f32(v), f32(mask), c.p, c.causal, c.scale);
    REQUIRE(s16.out.scalar_type() == kBFloat16);
    check_same(s16.out, s32.out, 8e-3);
    check_same(s16.lse, s32.lse, 1e-6);
    s32.out = s16.out.to(kFloat32);
    Tensor g = draw(s16.out.sizes().vec(), 6);
    auto [dq, dk, dv] = native::scaled_dot_product_attention_backward(g, q, k, v, mask, c.p, c.causal, c.scale, s16);
    auto [dq32, dk32, dv32] = native::scaled_dot_product_attention_backward(f32(g), f32(q), f32(k), f32(v), f32(mask),
                                                                            c.p, c.causal, c.scale, s32);
    CHECK(dq.scalar_type() == kBFloat16);
    check_same(dq, dq32, 1e-2);
    check_same(dk, dk32, 1e-2);
    check_same(dv, dv32, 1e-2);
  }
  // The model's head views of one qkv, read in place (gradients written as one tensor): bitwise
  // the result through contiguous copies.
  const int64_t N = 2, T = 40, H = 3, D = 8, C = H * D;
  Tensor g = randn_of({N, H, T, D}, 32, kBFloat16);
  Tensor grads[2];
  for (int in_place = 0; in_place < 2; ++in_place) {
    Tensor qkv = randn_of({N, T, 3 * C}, 31, kBFloat16).requires_grad_(true);
    std::vector<Tensor> parts = qkv.split(C, 2);
    auto heads = [&](const Tensor& t) {
      Tensor h = t.view({N, T, H, D}).transpose(1, 2);
      return in_place ? h : h.contiguous();
    };
    Tensor out = scaled_dot_product_attention(heads(parts[0]), heads(parts[1]), heads(parts[2]), {}, 0.0, true);
    CHECK(out.scalar_type() == kBFloat16);
    out.backward(g);
    grads[in_place] = qkv.grad();
  }
  CHECK(grads[1].scalar_type() == kBFloat16);
  CHECK(equal(grads[0], grads[1]));
}

TEST_CASE("scaled_dot_product_attention reads head views in place: bitwise the contiguous result") {
  // Note [Attention operands in place]: q, k, v as a model makes them (qkv [N, T, 3C] split,
  // viewed [N, T, H, D], transposed to [N, H, T, D]), a broadcast key, and a grad_out view.
  const int64_t N = 2, T = 70, H = 3, D = 8, C = H * D;
  for (bool causal : {false, true}) {
    INFO("causal ", causal);
    Tensor qkv = randn_of({N, T, 3 * C}, 11, kFloat32);
    std::vector<Tensor> parts = qkv.split(C, 2);
    auto heads = [&](const Tensor& t) { return t.view({N, T, H, D}).transpose(1, 2); };
    Tensor k1 = randn_of({1, H, T, D}, 12, kFloat32);  // broadcast over N
    Tensor g = randn_of({N, T, H, D}, 13, kFloat32).transpose(1, 2);
    TensorList results[2];
    for (int in_place = 0; in_place < 2; ++in_place) {
      Tensor q = (in_place ? heads(parts[0]) : heads(parts[0]).contiguous()).detach().requires_grad_(true);
      Tensor k = (in_place ? k1 : k1.contiguous()).detach().requires_grad_(true);
      Tensor v = (in_place ? heads(parts[2]) : heads(parts[2]).contiguous()).detach().requires_grad_(true);
      Tensor out = scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
      if (in_place) CHECK(out.transpose(1, 2).is_contiguous());  // the output takes the query's head layout
      out.backward(in_place ? g : g.contiguous());
      results[in_place] = {out.detach().contiguous(), q.grad().contiguous(), k.grad().contiguous(),
                           v.grad().contiguous()};
    }
    for (int i = 0; i < 4; ++i) CHECK(equal(results[0][i], results[1][i]));
  }
}

TEST_CASE("scaled_dot_product_attention: q, k, v split from one projection get their gradients as one tensor, bitwise") {
  // Note [Packed qkv gradients]: the model's qkv [N, T, 3C] split into heads; its gradient
  // equals the one through separate contiguous q, k, v.
  const int64_t N = 2, T = 30, H = 3, D = 8, C = H * D;
  Tensor grads[2];
  for (int packed = 0; packed < 2; ++packed) {
    Tensor qkv = randn_of({N, T, 3 * C}, 21, kFloat32).requires_grad_(true);
    std::vector<Tensor> parts = qkv.split(C, 2);
    auto heads = [&](const Tensor& t) {
      Tensor h = t.view({N, T, H, D}).transpose(1, 2);
      return packed ? h : h.contiguous();
    };
    Tensor out = scaled_dot_product_attention(heads(parts[0]), heads(parts[1]), heads(parts[2]), {}, 0.0, true);
    out.backward(randn_of(out.sizes().vec(), 22, kFloat32));
    grads[packed] = qkv.grad();
  }
  CHECK(equal(grads[0], grads[1]));
}

TEST_CASE("scaled_dot_product_attention in float32 is close to the float64 composite") {
  for (const Case& c : cases()) {
    INFO("case: ", c.name);
    TensorList fused = run(c, kFloat32, true), ref = run(c, kFloat64, false);
    for (size_t i = 0; i < fused.size(); ++i) {
      CHECK(test::max_abs_diff(fused[i], ref[i]) < 1e-4 * (1 + ref[i].abs().max().item<double>()));
    }
  }
}

TEST_CASE("scaled_dot_product_attention: dropout draws a fresh mask per call from the default generator") {
  Tensor q = randn_of({1, 20, 8}, 1), k = randn_of({1, 30, 8}, 2), v = randn_of({1, 30, 8}, 3);
  manual_seed(5);
  Tensor a = scaled_dot_product_attention(q, k, v, {}, 0.5);
  Tensor b = scaled_dot_product_attention(q, k, v, {}, 0.5);
  manual_seed(5);
  Tensor a2 = scaled_dot_product_attention(q, k, v, {}, 0.5);
  CHECK(a.equal(a2));
  CHECK_FALSE(a.equal(b));
  // p = 1 drops every weight.
  CHECK(scaled_dot_product_attention(q, k, v, {}, 1.0).abs().max().item<double>() == 0.0);
}

TEST_CASE("scaled_dot_product_attention: a query that sees no key gives 0 and no gradient, as torch") {
  Tensor q = randn_of({1, 3, 4}, 1).requires_grad_(true), k = randn_of({1, 5, 4}, 2).requires_grad_(true);
  Tensor v = randn_of({1, 5, 2}, 3).requires_grad_(true);
  Tensor mask = ones({3, 5}, TensorOptions(kBool));
  mask.select(0, 1).fill_(false);
  Tensor out = scaled_dot_product_attention(q, k, v, mask);
  out.sum().backward();
  CHECK(out.select(1, 1).abs().max().item<double>() == 0.0);
  CHECK(q.grad().select(1, 1).abs().max().item<double>() == 0.0);
  CHECK(out.select(1, 0).abs().max().item<double>() > 0.0);
  CHECK(std::isfinite(k.grad().abs().max().item<double>()));
  // A float mask of -inf the same.
  Tensor fmask = zeros({3, 5}, TensorOptions(kFloat64)).masked_fill(logical_not(mask), -INFINITY);
  check_close(scaled_dot_product_attention(q, k, v, fmask), out.detach());
}

TEST_CASE("scaled_dot_product_attention: a float mask that requires grad gets the composite's gradient") {
  Tensor q = randn_of({2, 6, 4}, 1), k = randn_of({2, 7, 4}, 2), v = randn_of({2, 7, 3}, 3);
  Tensor mask = randn_of({6, 7}, 4).requires_grad_(true);
  Tensor out = scaled_dot_product_attention(q, k, v, mask);
  check_close(out.detach(), reference(q, k, v, mask.detach(), 0, false, std::nullopt));
  CHECK(autograd::gradcheck([&](const TensorList& x) { return scaled_dot_product_attention(q, k, v, x[0]); },
                            {mask.detach().requires_grad_(true)}));
}

TEST_CASE("scaled_dot_product_attention: errors name the op, shapes and dtypes as torch") {
  Tensor q = randn_of({2, 5, 4}, 1), k = randn_of({2, 6, 4}, 2), v = randn_of({2, 6, 3}, 3);
  CHECK(error_of([&] { scaled_dot_product_attention(q, k, v.narrow(1, 0, 4)); }) ==
        "scaled_dot_product_attention: expected key and value of the same length S (dim -2), got key [2, 6, 4] and "
        "value [2, 4, 3]");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k.narrow(2, 0, 3), v); }) ==
        "scaled_dot_product_attention: expected key's last dim to equal query's (E), got query [2, 5, 4] and key "
        "[2, 6, 3]");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k.to(kFloat32), v); }) ==
        "Expected query, key, and value to have the same dtype, but got query.dtype: float64 key.dtype: float32 and "
        "value.dtype: float64 instead.");
  CHECK(error_of([&] { scaled_dot_product_attention(q.to(kInt64), k.to(kInt64), v.to(kInt64)); }) ==
        "scaled_dot_product_attention: expected float32 or float64 query, key and value, got int64");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k, v, ones({5, 6}, TensorOptions(kInt64))); }) ==
        "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: int64 and  "
        "query.dtype: float64 instead.");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k, v, ones({5, 6}, TensorOptions(kBool)), 0.0, true); }) ==
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k, v, ones({5, 5}, TensorOptions(kBool))); }) ==
        "scaled_dot_product_attention: attn_mask of shape [5, 5] does not broadcast to the attention weights' shape "
        "[2, 5, 6]");
  CHECK(error_of([&] { scaled_dot_product_attention(q, k, v, {}, 1.5); }) ==
        "scaled_dot_product_attention: dropout_p has to be between 0 and 1, but got 1.5");
  CHECK(error_of([&] { scaled_dot_product_attention(q, randn_of({3, 6, 4}, 4), v); }).find("shape") !=
        std::string::npos);
  CHECK(error_of([&] { scaled_dot_product_attention(randn_of({4}, 5), k, v); }) ==
        "scaled_dot_product_attention: expected query, key and value of at least 2 dims ([..., L, E], [..., S, E], "
        "[..., S, Ev]), got [4], [2, 6, 4] and [2, 6, 3]");
}

namespace {
// Counts the bytes the CPU allocator hands out and the most ever live at once.
class CountingAllocator final : public Allocator {
 public:
  explicit CountingAllocator(Allocator* inner) : inner_(inner) {}
  DataPtr allocate(size_t nbytes, Device device) override {
    DataPtr d = inner_->allocate(nbytes, device);
    const int64_t now = live_ += static_cast<int64_t>(nbytes);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {d.ptr, [this, nbytes, inner = std::move(d.deleter)](void* p) {
              live_ -= static_cast<int64_t>(nbytes);
              inner(p);
            }};
  }
  void reset_peak() { peak_ = live_.load(); }
  int64_t live() const { return live_; }
  int64_t peak() const { return peak_; }

 private:
  Allocator* inner_;
  std::atomic<int64_t> live_{0}, peak_{0};
};

// Peak bytes allocated beyond the inputs during one forward + backward at length T.
int64_t attention_peak_bytes(CountingAllocator& counter, int64_t T) {
  Tensor q = randn_of({1, 2, T, 16}, 1, kFloat32).requires_grad_(true);
  Tensor k = randn_of({1, 2, T, 16}, 2, kFloat32).requires_grad_(true);
  Tensor v = randn_of({1, 2, T, 16}, 3, kFloat32).requires_grad_(true);
  Tensor g = randn_of({1, 2, T, 16}, 4, kFloat32);
  const int64_t base = counter.live();
  counter.reset_peak();
  scaled_dot_product_attention(q, k, v, {}, 0.0, true).backward(g);
  return counter.peak() - base;
}
}  // namespace

TEST_CASE("scaled_dot_product_attention: memory grows linearly in T (no T x T matrix)") {
  Allocator* cpu = get_allocator(kCPU);
  static CountingAllocator counter(cpu);  // static: a block freed later still finds it
  set_allocator(kCPU, &counter);
  int64_t small = 0, large = 0;
  const int threads = get_num_threads();
  set_num_threads(1);  // per-thread scratch would otherwise depend on timing
  try {
    small = attention_peak_bytes(counter, 512);
    large = attention_peak_bytes(counter, 2048);
  } catch (...) {
    set_allocator(kCPU, cpu);
    set_num_threads(threads);
    throw;
  }
  set_allocator(kCPU, cpu);
  set_num_threads(threads);
  // One T x T float32 matrix per head would be 2 * 2048^2 * 4 = 32 MiB at 4T alone.
  MESSAGE("peak bytes during forward + backward: T = 512: ", small, ", T = 2048: ", large);
  CHECK(small > 0);
  CHECK(large < 5 * small);
  CHECK(large < 2 * 2048 * 2048 * 4);
}
