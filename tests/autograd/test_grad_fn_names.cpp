// grad_fn()->name() against PyTorch's node names, overload digit included (tests/data/grad_fn_names.json,
// made by tests/data/make_grad_fn_names.py). Each case is written once, as a gradring expression that
// is also the libtorch C++ call; GR_NAME_CASE stringifies it into the key the JSON is indexed by.
#include <functional>
#include <set>
#include <tuple>

#include "reference_util.h"

using namespace gr;

namespace {

struct NameCase {
  std::string expr;             // the key in grad_fn_names.json
  std::function<Tensor()> run;  // the tensor whose grad_fn is named
  const char* ours = nullptr;   // set where gradring's node deliberately differs (see below)
};

Tensor first(const Tensor& t) { return t; }
Tensor first(const std::tuple<Tensor, Tensor>& t) { return std::get<0>(t); }

std::string node_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : std::string("(no grad_fn)"); }

Tensor leaf(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return (rand(shape, TensorOptions(kFloat64), &g) * 0.8 + 0.1).requires_grad_(true);
}

}  // namespace

// A case whose node is PyTorch's.
#define GR_NAME_CASE(...) NameCase{#__VA_ARGS__, [&] { return first(__VA_ARGS__); }}
// A case where gradring records a different node than PyTorch, on purpose: a fused node of ours
// where PyTorch composes several (linear, batched matmul, circular pad); a composite of ours where
// PyTorch has one node (hardtanh is clamp, conv1d a squeezed conv2d, group_norm and pixel_shuffle
// end in a view, addbmm is an addmm, masked_fill with a value that requires grad is a where); or
// dropout, which PyTorch records as a mul on the CPU and as NativeDropoutBackward0 on CUDA
// (gradring's node is the fused one everywhere). `ours` is gradring's name.
#define GR_NAME_DIFFERS(ours, ...) NameCase{#__VA_ARGS__, [&] { return first(__VA_ARGS__); }, ours}

TEST_CASE("grad_fn names: PyTorch's node names with the overload digit") {
  const nlohmann::json ref = gr::test::load_reference("grad_fn_names.json").at("names");
  // The same variables as the generator script (only the shapes matter).
  Tensor x = leaf({3, 4}, 1), y = leaf({3, 4}, 2), v = leaf({4}, 3), u = leaf({4}, 4), m = leaf({4, 5}, 5);
  Tensor b1 = leaf({2, 3, 4}, 6), b2 = leaf({2, 4, 5}, 7);
  Tensor img = leaf({1, 2, 5, 5}, 8), wt = leaf({3, 2, 3, 3}, 9), cb = leaf({3}, 10);
  Tensor seq = leaf({1, 2, 6}, 11), wt1 = leaf({3, 2, 3}, 12), vol = leaf({1, 1, 3, 4, 4}, 13);
  Tensor lw = leaf({5, 4}, 14), lb = leaf({5}, 15);
  Tensor q = leaf({1, 2, 3, 4}, 16), k = leaf({1, 2, 3, 4}, 17), val = leaf({1, 2, 3, 4}, 18);
  Tensor gamma = leaf({4}, 19), beta = leaf({4}, 20), ch_w = leaf({2}, 21), ch_b = leaf({2}, 22);
  Tensor emb = leaf({6, 4}, 23);
  Tensor idx = tensor(std::vector<int64_t>{2, 0}, kInt64);
  Tensor idx2 = tensor(std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}, kInt64).reshape({3, 4});
  Tensor target = tensor(std::vector<int64_t>{1, 0, 3}, kInt64);
  Tensor mask = tensor(std::vector<double>{1, 0, 1, 0}, kFloat64).to(kBool).expand({3, 4}).contiguous();
  Tensor zeros = gr::zeros({3, 4}, kFloat64);
  Tensor running_mean = gr::zeros({2}, kFloat64), running_var = ones({2}, kFloat64);

  const std::vector<NameCase> cases = {
      // ---- arithmetic (Tensor and Scalar overloads) ----
      GR_NAME_CASE(x + y), GR_NAME_CASE(x + 2.0), GR_NAME_CASE(x.add(y, 2.0)), GR_NAME_CASE(x - y),
      GR_NAME_CASE(x - 2.0), GR_NAME_CASE(x * y), GR_NAME_CASE(x * 2.0), GR_NAME_CASE(2.0 * x), GR_NAME_CASE(x / y),
      GR_NAME_CASE(x / 2.0), GR_NAME_CASE(-x), GR_NAME_CASE(x.clone().add_(y)), GR_NAME_CASE(x.clone().add_(2.0)),
      GR_NAME_CASE(x.clone().sub_(y)), GR_NAME_CASE(x.clone().sub_(2.0)), GR_NAME_CASE(x.clone().mul_(y)),
      GR_NAME_CASE(x.clone().mul_(2.0)), GR_NAME_CASE(x.clone().div_(y)), GR_NAME_CASE(x.clone().div_(2.0)),
      // ---- element-wise math ----
      GR_NAME_CASE(exp(x)), GR_NAME_CASE(log(x)), GR_NAME_CASE(sqrt(x)), GR_NAME_CASE(abs(x)),
      GR_NAME_CASE(pow(x, 2.5)), GR_NAME_CASE(pow(x, y)), GR_NAME_CASE(relu(x)), GR_NAME_CASE(sigmoid(x)),
      GR_NAME_CASE(tanh(x)), GR_NAME_CASE(sin(x)), GR_NAME_CASE(cos(x)), GR_NAME_CASE(tan(x)), GR_NAME_CASE(asin(x)),
      GR_NAME_CASE(acos(x)), GR_NAME_CASE(atan(x)), GR_NAME_CASE(sinh(x)), GR_NAME_CASE(cosh(x)),
      GR_NAME_CASE(erf(x)), GR_NAME_CASE(erfc(x)), GR_NAME_CASE(erfinv(x)), GR_NAME_CASE(rsqrt(x)),
      GR_NAME_CASE(reciprocal(x)), GR_NAME_CASE(log1p(x)), GR_NAME_CASE(expm1(x)), GR_NAME_CASE(log2(x)),
      GR_NAME_CASE(log10(x)), GR_NAME_CASE(sign(x)), GR_NAME_CASE(floor(x)), GR_NAME_CASE(ceil(x)),
      GR_NAME_CASE(round(x)), GR_NAME_CASE(round(x, 2)), GR_NAME_CASE(trunc(x)), GR_NAME_CASE(frac(x)),
      GR_NAME_CASE(softplus(x)), GR_NAME_CASE(x.clone().sin_()), GR_NAME_CASE(x.clone().exp_()),
      GR_NAME_CASE(x.clone().sigmoid_()), GR_NAME_CASE(x.clone().neg_()), GR_NAME_CASE(x.clone().floor_()),
      GR_NAME_CASE(x.clone().relu_()), GR_NAME_CASE(atan2(x, y)), GR_NAME_CASE(hypot(x, y)),
      GR_NAME_CASE(logaddexp(x, y)), GR_NAME_CASE(xlogy(x, y)), GR_NAME_CASE(xlogy(x, 0.3)), GR_NAME_CASE(xlogy(0.3, y)),
      GR_NAME_CASE(x.clone().xlogy_(y)), GR_NAME_CASE(copysign(x, y)), GR_NAME_CASE(copysign(x, 0.3)),
      GR_NAME_CASE(fmod(x, y)),
      GR_NAME_CASE(fmod(x, 0.3)), GR_NAME_CASE(remainder(x, y)), GR_NAME_CASE(remainder(x, 0.3)),
      GR_NAME_CASE(x.clone().fmod_(0.3)), GR_NAME_CASE(lerp(x, y, 0.5)), GR_NAME_CASE(lerp(x, y, v)),
      GR_NAME_CASE(x.clone().lerp_(y, 0.5)), GR_NAME_CASE(clamp(x, 0.2, 0.7)),
      GR_NAME_CASE(clamp(x, y, std::nullopt)), GR_NAME_CASE(clamp_min(x, 0.2)), GR_NAME_CASE(clamp_min(x, y)),
      GR_NAME_CASE(clamp_max(x, 0.7)), GR_NAME_CASE(clamp_max(x, y)), GR_NAME_CASE(clip(x, 0.2, 0.7)),
      GR_NAME_CASE(x.clone().clamp_(0.2, 0.7)), GR_NAME_CASE(x.clone().clamp_min_(0.2)), GR_NAME_CASE(maximum(x, y)),
      GR_NAME_CASE(minimum(x, y)), GR_NAME_CASE(where(mask, x, y)), GR_NAME_CASE(where(mask, x, 0.5)),
      // ---- reductions ----
      GR_NAME_CASE(sum(x)), GR_NAME_CASE(x.sum()), GR_NAME_CASE(sum(x, {1})), GR_NAME_CASE(x.sum(1)),
      GR_NAME_CASE(mean(x)), GR_NAME_CASE(mean(x, {1})), GR_NAME_CASE(prod(x)), GR_NAME_CASE(prod(x, 1)),
      GR_NAME_CASE(var(x)), GR_NAME_CASE(var(x, {1}, true)), GR_NAME_CASE(gr::std(x)),
      GR_NAME_CASE(gr::std(x, {1}, true)), GR_NAME_CASE(var_mean(x, {1})), GR_NAME_CASE(std_mean(x, {1})),
      GR_NAME_CASE(norm(x)), GR_NAME_CASE(norm(x, 1, {1})), GR_NAME_CASE(norm(x, 2, kFloat64)),
      GR_NAME_CASE(norm(x, 2, {1}, false, kFloat64)), GR_NAME_CASE(frobenius_norm(x, {0, 1})),
      GR_NAME_CASE(linalg::vector_norm(x)), GR_NAME_CASE(linalg::matrix_norm(x)), GR_NAME_CASE(logsumexp(x, {1})),
      GR_NAME_CASE(cumsum(x, 1)), GR_NAME_CASE(cumprod(x, 1)), GR_NAME_CASE(max(x)), GR_NAME_CASE(min(x)),
      GR_NAME_CASE(max(x, 1)), GR_NAME_CASE(min(x, 1)), GR_NAME_CASE(amax(x, {1})), GR_NAME_CASE(amin(x, {1})),
      GR_NAME_CASE(median(x)), GR_NAME_CASE(median(x, 1)), GR_NAME_CASE(nanmedian(x)), GR_NAME_CASE(nanmedian(x, 1)),
      GR_NAME_CASE(sort(x, 1)), GR_NAME_CASE(sort(x, std::optional<bool>(true), 1)), GR_NAME_CASE(topk(x, 2)),
      // ---- linear algebra ----
      GR_NAME_CASE(mm(x, m)), GR_NAME_CASE(x.mm(m)), GR_NAME_CASE(bmm(b1, b2)), GR_NAME_CASE(addmm(lb, x, lw.t())),
      GR_NAME_CASE(baddbmm(x.narrow(1, 0, 3), b1, b1.transpose(1, 2))),
      GR_NAME_DIFFERS("AddmmBackward0", addbmm(x, b1, b2.narrow(2, 0, 4))), GR_NAME_CASE(dot(v, u)),
      GR_NAME_CASE(mv(x, v)), GR_NAME_CASE(outer(v, u)), GR_NAME_CASE(matmul(x, m)),
      GR_NAME_DIFFERS("MatmulBackward", matmul(b1, b2)), GR_NAME_DIFFERS("SqueezeBackward1", matmul(x, v)),
      GR_NAME_DIFFERS("LinearBackward", linear(x, lw, lb)),
      // ---- shape and views ----
      GR_NAME_CASE(x.view({4, 3})), GR_NAME_CASE(x.reshape({4, 3})), GR_NAME_CASE(x.permute({1, 0})),
      GR_NAME_CASE(x.transpose(0, 1)), GR_NAME_CASE(x.t()), GR_NAME_CASE(x.narrow(1, 1, 2)),
      GR_NAME_CASE(x.slice(1, 1, 3)), GR_NAME_CASE(x.select(1, 2)), GR_NAME_CASE(x[1]),
      GR_NAME_CASE(x.expand({2, 3, 4})), GR_NAME_CASE(x.unsqueeze(0)), GR_NAME_CASE(x.unsqueeze(0).squeeze()),
      GR_NAME_CASE(x.unsqueeze(0).squeeze(0)), GR_NAME_CASE(x.flatten()), GR_NAME_CASE(x.t().contiguous()),
      GR_NAME_CASE(x.clone()), GR_NAME_CASE(x.to(kFloat32)), GR_NAME_CASE(cat({x, y}, 0)),
      GR_NAME_CASE(stack({x, y}, 0)), GR_NAME_CASE(x.split(2, 1)[0]), GR_NAME_CASE(x.split_with_sizes({1, 3}, 1)[0]),
      GR_NAME_CASE(x.chunk(2, 1)[0]), GR_NAME_CASE(x.unbind(0)[0]), GR_NAME_CASE(flip(x, {0})),
      GR_NAME_CASE(roll(x, {1}, {1})), GR_NAME_CASE(x.repeat({2, 1})), GR_NAME_CASE(tril(x)), GR_NAME_CASE(triu(x)),
      GR_NAME_CASE(diagonal(x)), GR_NAME_CASE(movedim(b1, 0, 2)), GR_NAME_CASE(broadcast_to(v, {3, 4})),
      GR_NAME_CASE(unflatten(x, 1, {2, 2})),
      // ---- indexing ----
      GR_NAME_CASE(index_select(x, 1, idx)), GR_NAME_CASE(gather(x, 1, idx2)), GR_NAME_CASE(scatter(x, 1, idx2, y)),
      GR_NAME_CASE(scatter(x, 1, idx2, 0.5)), GR_NAME_CASE(scatter_add(x, 1, idx2, y)),
      GR_NAME_CASE(index_add(x, 0, idx, y.narrow(0, 0, 2))), GR_NAME_CASE(index_copy(x, 0, idx, y.narrow(0, 0, 2))),
      GR_NAME_CASE(index_fill(x, 1, idx, 0.5)), GR_NAME_CASE(x.clone().index_fill_(1, idx, lb.sum())),
      GR_NAME_CASE(masked_fill(x, mask, 0.5)), GR_NAME_CASE(masked_fill(x, mask, zeros.sum())),
      GR_NAME_DIFFERS("WhereBackward0", masked_fill(x, mask, lb.sum())),
      GR_NAME_CASE(x.clone().masked_fill_(mask, lb.sum())), GR_NAME_CASE(masked_select(x, mask)),
      GR_NAME_CASE(masked_scatter(x, mask, y)), GR_NAME_CASE(x.clone().masked_fill_(mask, 0.5)),
      GR_NAME_CASE(index(x, {idx})), GR_NAME_CASE(index_put(x, {idx}, v)),
      GR_NAME_CASE(x.clone().index_put_({idx}, v)), GR_NAME_CASE(zeros.clone().copy_(x)),
      GR_NAME_CASE(x.clone().fill_(1.0)), GR_NAME_CASE(x.clone().zero_()), GR_NAME_CASE(x.clone().normal_()),
      GR_NAME_CASE(x.clone().uniform_()), GR_NAME_CASE(x.clone().bernoulli_(0.5)),
      // ---- nn functional ----
      GR_NAME_CASE(softmax(x, 1)), GR_NAME_CASE(log_softmax(x, 1)), GR_NAME_CASE(nll_loss(x, target)),
      GR_NAME_CASE(cross_entropy(x, target)), GR_NAME_CASE(mse_loss(x, y)),
      GR_NAME_CASE(layer_norm(x, {4}, gamma, beta)),
      GR_NAME_CASE(batch_norm(img, ch_w, ch_b, running_mean, running_var, true, 0.1, 1e-5)),
      GR_NAME_CASE(embedding(emb, idx2)), GR_NAME_CASE(gelu(x)), GR_NAME_CASE(silu(x)), GR_NAME_CASE(mish(x)),
      GR_NAME_CASE(leaky_relu(x)), GR_NAME_CASE(elu(x)), GR_NAME_CASE(selu(x)),
      GR_NAME_DIFFERS("ClampBackward1", hardtanh(x)), GR_NAME_DIFFERS("ClampBackward1", relu6(x)),
      GR_NAME_CASE(conv2d(img, wt, cb)), GR_NAME_DIFFERS("SqueezeBackward1", conv1d(seq, wt1)),
      GR_NAME_CASE(conv_transpose2d(img, wt.transpose(0, 1))), GR_NAME_CASE(max_pool2d(img, 2)),
      GR_NAME_CASE(avg_pool2d(img, 2)), GR_NAME_CASE(adaptive_avg_pool2d(img, {2, 2})),
      GR_NAME_CASE(scaled_dot_product_attention(q, k, val)), GR_NAME_CASE(constant_pad_nd(img, {1, 1})),
      GR_NAME_CASE(reflection_pad1d(seq, {1, 1})), GR_NAME_CASE(reflection_pad2d(img, {1, 1, 1, 1})),
      GR_NAME_CASE(reflection_pad3d(vol, {1, 1, 1, 1, 1, 1})), GR_NAME_CASE(replication_pad1d(seq, {1, 1})),
      GR_NAME_CASE(replication_pad2d(img, {1, 1, 1, 1})), GR_NAME_CASE(replication_pad3d(vol, {1, 1, 1, 1, 1, 1})),
      GR_NAME_DIFFERS("PadCircularBackward", _pad_circular(img, {1, 1, 1, 1})),
      GR_NAME_CASE(upsample_nearest1d(seq, {12})), GR_NAME_CASE(upsample_nearest2d(img, {10, 10})),
      GR_NAME_CASE(upsample_nearest3d(vol, {6, 8, 8})), GR_NAME_CASE(upsample_linear1d(seq, {12}, false)),
      GR_NAME_CASE(upsample_bilinear2d(img, {10, 10}, false)),
      GR_NAME_CASE(upsample_trilinear3d(vol, {6, 8, 8}, false)), GR_NAME_CASE(_upsample_nearest_exact1d(seq, {12})),
      GR_NAME_CASE(_upsample_nearest_exact2d(img, {10, 10})), GR_NAME_CASE(_upsample_nearest_exact3d(vol, {6, 8, 8})),
      GR_NAME_DIFFERS("ViewBackward0", pixel_shuffle(b1.reshape({1, 4, 3, 2}), 2)),
      GR_NAME_DIFFERS("ViewBackward0", pixel_unshuffle(img.narrow(2, 0, 4).narrow(3, 0, 4), 2)),
      GR_NAME_DIFFERS("ViewBackward0", group_norm(img, 1)), GR_NAME_CASE(rms_norm(x, {4}, gamma)),
      GR_NAME_DIFFERS("NativeDropoutBackward0", dropout(x, 0.5, true)),
  };

  std::set<std::string> keys;
  for (const NameCase& c : cases) {
    INFO(c.expr);
    CHECK(keys.insert(c.expr).second);  // each expression once
    REQUIRE_MESSAGE(ref.contains(c.expr), "no PyTorch name for this case: add it to tests/data/make_grad_fn_names.py");
    const std::string torch_name = ref.at(c.expr).get<std::string>();
    if (c.ours) {
      CHECK(node_name(c.run()) == c.ours);
      CHECK_MESSAGE(torch_name != c.ours, "now PyTorch's name: make it a GR_NAME_CASE");
    } else {
      CHECK(node_name(c.run()) == torch_name);
    }
  }
  for (const auto& item : ref.items()) {
    INFO(item.key());
    CHECK_MESSAGE(keys.count(item.key()) == 1, "a case of make_grad_fn_names.py that the test does not run");
  }
  CHECK(cases.size() >= 200);
}

TEST_CASE("grad_fn names: gradring's own nodes keep names without a digit") {
  Tensor x = leaf({3, 4}, 1), w = leaf({5, 4}, 2);
  CHECK(linear(x, w).grad_fn()->name() == "LinearBackward");
  CHECK(x.grad_fn() == nullptr);
  // A leaf's accumulator is PyTorch's AccumulateGrad.
  Tensor y = x * 2.0;
  REQUIRE(y.grad_fn()->next_edges().size() == 1);
  CHECK(y.grad_fn()->next_edges()[0].node->name() == "AccumulateGrad");
}
