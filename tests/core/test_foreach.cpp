// The foreach ops (core/native/optim/foreach.h) and the list optimizer steps on the CPU: the same
// bits as the one-tensor-at-a-time arithmetic they replace (clip_grad_norm_'s norm of norms,
// mul_ by the clip factor, fill_, the single-parameter steps), and the packing of multi-tensor
// launches (cuda_kernels/multi_tensor.h).
#include <gradring/core/native/copy/copy.h>
#include <gradring/core/native/optim/foreach.h>
#include <gradring/core/native/optim/optimizer_steps.h>
#include <gradring/core/native/reduce/reduce.h>
#include <gradring/core/native/shape/shape.h>
#include <gradring/core/optimizer_functors.h>

#include <map>
#include <set>

#include "cuda_kernels/multi_tensor.h"
#include "test_util.h"

using namespace gr;

namespace {

std::vector<Tensor> grads(uint64_t seed, ScalarType t = kFloat32) {
  Generator g(seed);
  std::vector<Tensor> out;
  for (int64_t n : {7, 1, 4096, 300, 65537, 2})
    out.push_back(randn({n}, TensorOptions(t), &g) * 3.0);
  out.push_back(randn({33, 17}, TensorOptions(t), &g));
  return out;
}

// What clip_grad_norm_ computed before the foreach ops: each norm, in float64, their norm.
double norm_of_norms(const std::vector<Tensor>& ts, double p) {
  TensorList norms;
  for (const Tensor& t : ts) norms.push_back(native::to_dtype(native::vector_norm(t, p), kFloat64));
  return native::vector_norm(native::stack(norms, 0), p).item<double>();
}

}  // namespace

TEST_CASE("foreach_norm on the CPU is clip_grad_norm_'s norm of norms, bit for bit") {
  for (double p : {2.0, 1.0, 3.0, 0.0, double(INFINITY)}) {
    CAPTURE(p);
    const std::vector<Tensor> g = grads(1);
    Tensor total = native::foreach_norm(g, p);
    CHECK(total.dim() == 0);
    CHECK(total.scalar_type() == kFloat64);
    CHECK(total.item<double>() == norm_of_norms(g, p));
  }
  // A list of two dtypes goes tensor by tensor, with the same arithmetic.
  std::vector<Tensor> mixed = grads(2);
  mixed.push_back(randn({5}, kFloat64));
  CHECK_FALSE(native::foreach_uniform(mixed));
  CHECK(native::foreach_norm(mixed, 2).item<double>() == norm_of_norms(mixed, 2));
  CHECK(native::foreach_norm({}, 2).item<double>() == 0.0);
}

TEST_CASE("foreach_clip_: mul_ by max_norm / (total + 1e-6) when below one or NaN, as clip_grad_norm_") {
  const std::vector<Tensor> g = grads(3);
  std::vector<Tensor> want;
  for (const Tensor& t : g) want.push_back(t.clone());
  const Tensor total = native::foreach_norm(g, 2);
  const double coef = 1.0 / (total.item<double>() + 1e-6);
  REQUIRE(coef < 1.0);
  for (Tensor& t : want) t.mul_(coef);
  native::foreach_clip_(g, total, 1.0);
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i].equal(want[i]));
  // A total below max_norm leaves them as they are.
  std::vector<Tensor> before;
  for (const Tensor& t : g) before.push_back(t.clone());
  native::foreach_clip_(g, native::foreach_norm(g, 2), 1e9);
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i].equal(before[i]));
  // A NaN total spreads to the gradients, as in torch.
  native::foreach_clip_(g, full({}, NAN, TensorOptions(kFloat64)), 1.0);
  CHECK(std::isnan(g[0][0].item<float>()));
  CHECK(functors::clip_applies(NAN));
  CHECK_FALSE(functors::clip_applies(1.0));
  CHECK(functors::clip_coefficient(9.0, 3.0) == 3.0 / (9.0 + 1e-6));
}

TEST_CASE("foreach_zero_ zeroes every tensor, uniform or not") {
  std::vector<Tensor> g = grads(4);
  native::foreach_zero_(g);
  for (const Tensor& t : g) CHECK(t.abs().max().item<float>() == 0.0f);
  std::vector<Tensor> mixed{randn({3}), randn({4}, kFloat64), randn({4, 4}).t()};  // a transposed one too
  native::foreach_zero_(mixed);
  for (const Tensor& t : mixed) CHECK(t.abs().max().item<double>() == 0.0);
}

TEST_CASE("multi-tensor launches cover every chunk of every tensor once, in order, within the argument limits") {
  using namespace gr::cuda;
  // A GPT's parameter sizes (12 layers of 768: many 2.4 M-value matrices and small vectors),
  // empty tensors, and more tensors than one launch holds.
  std::vector<int64_t> numels;
  for (int l = 0; l < 12; ++l)
    for (int64_t n : {768, 768, 2304 * 768, 2304, 768 * 768, 768, 768, 768, 3072 * 768, 3072, 768 * 3072, 768})
      numels.push_back(n);
  numels.push_back(0);
  for (int i = 0; i < 100; ++i) numels.push_back(1 + i);
  numels.push_back(kChunk * kMaxBlocks + 3);  // one tensor spanning launches
  std::vector<std::array<void*, 2>> ptrs;
  for (size_t t = 0; t < numels.size(); ++t)
    ptrs.push_back({reinterpret_cast<void*>(0x1000 * (t + 1)), reinterpret_cast<void*>(0x1000 * (t + 1) + 8)});
  std::map<const void*, size_t> tensor_of;
  for (size_t t = 0; t < ptrs.size(); ++t) tensor_of[ptrs[t][0]] = t;
  std::vector<std::pair<size_t, int64_t>> seen;  // (tensor, chunk) in launch order
  int launches = 0;
  int64_t blocks_so_far = 0;
  const int64_t total = multi_tensor_apply<2>(ptrs, numels, [&](const TensorListArgs<2>& a, int blocks) {
    ++launches;
    CHECK(blocks >= 1);
    CHECK(blocks <= kMaxBlocks);
    CHECK(a.first_block == blocks_so_far);
    blocks_so_far += blocks;
    for (int b = 0; b < blocks; ++b) {
      const int slot = a.block_tensor[b];
      REQUIRE(slot < kMaxTensors);
      const size_t t = tensor_of.at(a.ptr[0][slot]);
      CHECK(a.ptr[1][slot] == ptrs[t][1]);
      CHECK(a.numel[slot] == numels[t]);
      seen.emplace_back(t, a.block_chunk[b]);
    }
  });
  std::vector<std::pair<size_t, int64_t>> want;
  for (size_t t = 0; t < numels.size(); ++t)
    for (int64_t c = 0; c < chunks_of(numels[t]); ++c) want.emplace_back(t, c);
  CHECK(seen == want);
  CHECK(total == static_cast<int64_t>(want.size()));
  CHECK(launches <= static_cast<int>(want.size() / kMaxBlocks) + 1 + static_cast<int>(numels.size() / kMaxTensors) + 1);
  CHECK(sizeof(TensorListArgs<5>) <= 4096);
}

TEST_CASE("list optimizer steps equal the single-parameter steps bit for bit (CPU)") {
  Generator g(8);
  std::vector<native::StepOperands> list;
  std::vector<native::StepOperands> single;
  for (int64_t n : {5, 1000, 1}) {
    Tensor p = randn({n}, TensorOptions(kFloat32), &g), gr_ = randn({n}, TensorOptions(kFloat32), &g);
    Tensor m = randn({n}, TensorOptions(kFloat32), &g).abs(), v = randn({n}, TensorOptions(kFloat32), &g).abs();
    list.push_back({p.clone(), gr_, m.clone(), v.clone(), Tensor()});
    single.push_back({p.clone(), gr_, m.clone(), v.clone(), Tensor()});
  }
  const functors::AdamStep<double> f{1e-3, 0.9, 0.95, 1e-8, 0.1, 0.1, 0.05, false, true};
  native::adam_steps(list, f);
  for (auto& o : single) native::adam_step(o[0], o[1], o[2], o[3], o[4], f);
  for (size_t i = 0; i < list.size(); ++i)
    for (size_t k : {0, 2, 3}) CHECK(list[i][k].equal(single[i][k]));
  std::vector<native::StepOperands> bad{{randn({3}), randn({4}), randn({3}), randn({3})}};
  CHECK_THROWS_AS(native::adam_steps(bad, f), gr::Error);
}

TEST_CASE("the RMSprop, Adagrad, Adamax, NAdam and RAdam list steps check their operands and run mixed lists") {
  const functors::RmspropStep<double> momentum{0.01, 0.99, 0.01, 1e-8, 0, 0.9, true, false};
  std::vector<native::StepOperands> no_buffer{{randn({3}), randn({3}), randn({3}).abs(), Tensor(), Tensor()}};
  CHECK_THROWS_AS(native::rmsprop_steps(no_buffer, momentum), gr::Error);  // momentum without its buffer
  const functors::AdagradStep<double> adagrad{0.1, 1e-10, 0};
  std::vector<native::StepOperands> too_few{{randn({3}), randn({3})}};
  CHECK_THROWS_AS(native::adagrad_steps(too_few, adagrad), gr::Error);
  std::vector<native::StepOperands> shapes{{randn({3}), randn({3}), randn({4}).abs()}};
  CHECK_THROWS_AS(native::adagrad_steps(shapes, adagrad), gr::Error);
  // float32 and float64 in one list: one parameter at a time, each as on its own.
  Generator g(9);
  const Tensor p32 = randn({5}, TensorOptions(kFloat32), &g), p64 = randn({6}, TensorOptions(kFloat64), &g);
  std::vector<native::StepOperands> mixed{{p32.clone(), p32 * 0.5, ones({5})}, {p64.clone(), p64 * 0.5, ones({6}, kFloat64)}};
  native::adagrad_steps(mixed, adagrad);
  for (const native::StepOperands& o : mixed) {
    const Tensor p = o[0].scalar_type() == kFloat32 ? p32 : p64;
    std::vector<native::StepOperands> alone{{p.clone(), p * 0.5, ones_like(p)}};
    native::adagrad_steps(alone, adagrad);
    CHECK(o[0].equal(alone[0][0]));
    CHECK(o[2].equal(alone[0][2]));
    CHECK_FALSE(o[0].equal(p));  // it stepped
  }
}
