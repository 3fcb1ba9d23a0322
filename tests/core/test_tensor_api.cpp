// The shape of the Tensor API, as libtorch's: in-place methods on const tensors, to() in all
// its overloads, Scalar's accessors, item<T>, accessor<T, N>, data_ptr<T>, new_* methods.
#include <type_traits>

#include "test_util.h"

using namespace gr;

TEST_CASE("in-place methods are callable on const tensors and change the shared storage") {
  Tensor w = ones({3});
  const Tensor& cw = w;
  cw.add_(1).mul_(3);
  CHECK(w.equal(full({3}, 6.0)));
  static_assert(std::is_same_v<decltype(cw.zero_()), Tensor&>, "libtorch's in-place methods return Tensor&");
  cw.fill_(2).sub_(ones({3})).div_(2);
  CHECK(w.equal(full({3}, 0.5)));
  cw.relu_();
  cw.zero_();
  CHECK(w.equal(zeros({3})));

  // The two spellings the issue names.
  Tensor p = ones({2}, TensorOptions().requires_grad(true));
  (p * 3).sum().backward();
  p.grad().zero_();
  CHECK(p.grad().equal(zeros({2})));
  std::vector<Tensor> params{zeros({2}), zeros({2, 2})};
  {
    NoGradGuard no_grad;
    for (const auto& q : params) q.copy_(full(q.sizes(), 7.0));
  }
  CHECK(params[1].equal(full({2, 2}, 7.0)));

  // The compound operators keep working.
  Tensor a = ones({2});
  a += 1;
  a *= ones({2}) * 3;
  a -= 1;
  a /= 5;
  CHECK(a.equal(ones({2})));
}

TEST_CASE("requires_grad_ and set_requires_grad on const tensors return the tensor") {
  Tensor t = zeros({2});
  const Tensor& c = t;
  static_assert(std::is_same_v<decltype(c.requires_grad_()), const Tensor&>);
  CHECK(c.requires_grad_().requires_grad());
  c.set_requires_grad(false);
  CHECK_FALSE(t.requires_grad());
  CHECK_THROWS_WITH_AS(zeros({1}, kInt32).requires_grad_(), doctest::Contains("only floating point"), gr::Error);
}

TEST_CASE("in-place on a leaf that requires grad is refused unless under NoGradGuard") {
  const Tensor p = ones({2}, TensorOptions().requires_grad(true));
  CHECK_THROWS_WITH_AS(p.add_(1), doctest::Contains("a leaf Variable that requires grad"), gr::Error);
  NoGradGuard no_grad;
  p.add_(1);
  CHECK(p.equal(full({2}, 2.0)));
}

TEST_CASE("to(): every overload, copy and the options that are left unset") {
  Tensor x = arange(6, kFloat32).reshape({2, 3});
  // Same dtype and device: the same tensor, unless copy.
  CHECK(x.to(kFloat32).is_same(x));
  CHECK(x.to(Device(kCPU)).is_same(x));
  CHECK(x.to(kCPU, kFloat32).is_same(x));
  CHECK(x.to(TensorOptions()).is_same(x));
  Tensor copied = x.to(kFloat32, /*non_blocking=*/false, /*copy=*/true);
  CHECK_FALSE(copied.storage().is_same(x.storage()));
  CHECK(copied.equal(x));
  // Options name only what changes: a dtype-only TensorOptions keeps the device, a
  // device-only one keeps the dtype.
  Tensor d = x.to(TensorOptions(kFloat64));
  CHECK(d.scalar_type() == kFloat64);
  CHECK(x.to(TensorOptions(Device(kCPU))).scalar_type() == kFloat32);
  CHECK(x.to(Device(kCPU), kInt16).scalar_type() == kInt16);
  CHECK(x.to(kInt8, /*non_blocking=*/true).scalar_type() == kInt8);  // harmless off CUDA
  Tensor other = zeros({1}, kInt32);
  CHECK(x.to(other).scalar_type() == kInt32);
  CHECK(x.type_as(other).scalar_type() == kInt32);
  CHECK(x.to("cpu").is_same(x));
  CHECK_THROWS_WITH_AS(x.to(TensorOptions().requires_grad(true)), doctest::Contains("requires_grad"), gr::Error);
  // Gradients flow back through a dtype conversion.
  Tensor leaf = ones({2}, TensorOptions(kFloat32).requires_grad(true));
  leaf.to(kFloat64, false, true).sum().backward();
  CHECK(leaf.grad().scalar_type() == kFloat32);
  CHECK(leaf.grad().equal(ones({2})));
  CHECK_THROWS_WITH_AS(leaf.to(kInt32), doctest::Contains("floating point dtype"), gr::Error);
}

TEST_CASE("Scalar: libtorch's accessors, checked as c10's") {
  Scalar d = 2.75, i = int64_t{-3}, b = true;
  CHECK(d.toDouble() == 2.75);
  CHECK(d.toFloat() == 2.75f);
  CHECK(d.toLong() == 2);
  CHECK(d.toInt() == 2);
  CHECK(i.toLong() == -3);
  CHECK(i.toDouble() == -3.0);
  CHECK(b.toBool());
  CHECK(Scalar(0.0).toBool() == false);
  CHECK(d.isFloatingPoint());
  CHECK_FALSE(i.isFloatingPoint());
  CHECK(i.isIntegral(false));
  CHECK_FALSE(b.isIntegral(false));
  CHECK(b.isIntegral(true));
  CHECK(b.isBoolean());
  CHECK(d.type() == kDouble);
  CHECK(i.type() == kLong);
  CHECK(static_cast<float>(Scalar(1.5).toHalf()) == 1.5f);
  CHECK((-i).toLong() == 3);
  CHECK((-d).toDouble() == -2.75);
  CHECK(Scalar(int64_t{-255}).toByte() == 1);  // negative values wrap into uint8, as c10 allows
  CHECK_THROWS_WITH_AS(Scalar(300).toChar(), doctest::Contains("value 300 cannot be converted to type int8"), gr::Error);
  CHECK_THROWS_WITH_AS(Scalar(1e10).toInt(), doctest::Contains("without overflow"), gr::Error);
  CHECK_THROWS_WITH_AS(Scalar(std::nan("")).toLong(), doctest::Contains("without overflow"), gr::Error);
  CHECK(std::isnan(Scalar(std::nan("")).toFloat()));  // NaN fits a float
  CHECK_THROWS_AS(Scalar(1e39).toFloat(), gr::Error);
  CHECK_THROWS_AS(-Scalar(true), gr::Error);
  // gradring's own to<T>() converts as the kernels do, unchecked.
  CHECK(Scalar(300).to<int8_t>() == 44);
}

TEST_CASE("item<T>() for every dtype, checked as libtorch's") {
  CHECK(full({}, 7, kInt32).item<int32_t>() == 7);
  CHECK(full({}, -7, kInt16).item<int16_t>() == -7);
  CHECK(full({}, -128, kInt8).item<int8_t>() == -128);
  CHECK(full({1}, 100, kInt8).item<int64_t>() == 100);
  CHECK(static_cast<float>(full({}, 1.5, kBFloat16).item<BFloat16>()) == 1.5f);
  CHECK(static_cast<float>(full({}, 1.5, kFloat16).item<Half>()) == 1.5f);
  CHECK(full({}, 2.5, kFloat32).item().toDouble() == 2.5);
  CHECK_THROWS_WITH_AS(full({}, 300, kInt32).item<int8_t>(), doctest::Contains("item: value 300"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}).item(), doctest::Contains("a Tensor with 2 elements"), gr::Error);
}

TEST_CASE("accessor<T, N>: chained operator[], sizes and strides, checked against dims and dtype") {
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  auto a = x.accessor<float, 2>();
  CHECK(a.size(0) == 3);
  CHECK(a.size(1) == 4);
  CHECK(a.stride(0) == 4);
  CHECK(a[2][1] == 9.0f);
  a[0][3] = -1;  // writes through to the tensor
  CHECK(x[0][3].item<float>() == -1.0f);
  // A transposed view: strides are followed.
  Tensor t = x.t();
  auto at = t.accessor<float, 2>();
  CHECK(at[1][2] == 9.0f);
  CHECK(at.stride(0) == 1);
  auto row = at[1];
  CHECK(row.size(0) == 3);
  CHECK(row[2] == 9.0f);
  Tensor i = arange(8, kInt16).reshape({2, 2, 2});
  CHECK((i.accessor<int16_t, 3>()[1][0][1]) == 5);
  const Tensor& ci = i;
  CHECK((ci.accessor<const int16_t, 3>()[1][1][1]) == 7);
  CHECK_THROWS_WITH_AS((x.accessor<float, 3>()), doctest::Contains("expected 3 dims but tensor has 2"), gr::Error);
  CHECK_THROWS_WITH_AS((x.accessor<double, 2>()), doctest::Contains("dtype float32 but the requested type is float64"),
                       gr::Error);
}

TEST_CASE("data_ptr<T> for the new dtypes checks the type") {
  Tensor x = tensor({1, 2, 3}, kInt8);
  CHECK(x.data_ptr<int8_t>()[2] == 3);
  CHECK(x.const_data_ptr<int8_t>()[0] == 1);
  CHECK(zeros({2}, kInt32).data_ptr<int32_t>()[1] == 0);
  CHECK(zeros({2}, kInt16).data_ptr<int16_t>() != nullptr);
  CHECK_THROWS_WITH_AS(x.data_ptr<int16_t>(), doctest::Contains("dtype int8 but the requested type is int16"),
                       gr::Error);
}

TEST_CASE("new_zeros/new_ones/new_full/new_empty take this tensor's dtype and device unless told") {
  Tensor x = zeros({2}, kInt16);
  Tensor z = x.new_zeros({3, 2});
  CHECK(z.scalar_type() == kInt16);
  CHECK(z.sizes() == IntArrayRef{3, 2});
  CHECK(x.new_ones({2}).equal(tensor({1, 1}, kInt16)));
  Tensor f = x.new_full({2}, 2.5, kFloat64);
  CHECK(f.scalar_type() == kFloat64);
  CHECK(f.equal(full({2}, 2.5, kFloat64)));
  CHECK(x.new_empty({4}).scalar_type() == kInt16);
  CHECK(x.new_zeros({1}, TensorOptions().requires_grad(false)).scalar_type() == kInt16);
  CHECK_THROWS_WITH_AS(x.new_full({1}, 40000), doctest::Contains("without overflow"), gr::Error);
}

TEST_CASE("options() and dtype() describe the tensor; TensorOptions remembers what was set") {
  Tensor x = zeros({2}, kInt8);
  CHECK(x.options().dtype() == kInt8);
  CHECK(x.options().has_dtype());
  TensorOptions o;
  CHECK_FALSE(o.has_dtype());
  CHECK_FALSE(o.has_device());
  CHECK(o.dtype() == kFloat32);  // the default dtype when unset
  TensorOptions merged = TensorOptions(kFloat64).merged_over(x.options());
  CHECK(merged.dtype() == kFloat64);
  CHECK(merged.has_device());
}
