// Tensor creation, metadata, dtype conversion, item/data_ptr and printing.
#include <sstream>

#include "test_util.h"

using namespace gr;
using gr::test::check_values;
using gr::test::values;

TEST_CASE("creation functions fill shape, dtype and values") {
  Tensor z = zeros({2, 3});
  CHECK(z.dim() == 2);
  CHECK(z.size(0) == 2);
  CHECK(z.size(-1) == 3);
  CHECK(z.numel() == 6);
  CHECK(z.scalar_type() == kFloat32);
  CHECK(z.is_contiguous());
  CHECK(z.strides() == IntArrayRef({3, 1}));
  check_values(z, {0, 0, 0, 0, 0, 0});
  check_values(ones({2}, kFloat64), {1, 1});
  check_values(full({3}, 2.5), {2.5, 2.5, 2.5});
  check_values(arange(5), {0, 1, 2, 3, 4});
  CHECK(arange(5).scalar_type() == kInt64);
  CHECK(arange(0.0, 1.0, 0.25).scalar_type() == kFloat32);
  check_values(arange(0.0, 1.0, 0.25), {0, 0.25, 0.5, 0.75});
  check_values(arange(10, 0, -3), {10, 7, 4, 1});
  check_values(linspace(0, 1, 3), {0, 0.5, 1});
  check_values(eye(2), {1, 0, 0, 1});
  check_values(tensor({1, 2, 3}), {1, 2, 3});
  CHECK(tensor({1, 2, 3}).scalar_type() == kInt64);
  CHECK(tensor({1.5, 2.5}).scalar_type() == kFloat32);
  CHECK(scalar_tensor(3.0).dim() == 0);
  CHECK(scalar_tensor(3.0).item<double>() == 3.0);
  CHECK(zeros_like(ones({4}, kInt64)).scalar_type() == kInt64);
  CHECK(empty({0, 3}).numel() == 0);
}

TEST_CASE("bad creation arguments throw gr::Error naming the op") {
  CHECK_THROWS_WITH_AS(zeros({2, -1}), doctest::Contains("negative dimension"), gr::Error);
  // Sizes whose element or byte count wraps int64 are refused before anything is allocated,
  // also when a 0 dim makes the element count 0 (the strides would still wrap).
  const int64_t huge = int64_t{1} << 40;
  CHECK_THROWS_WITH_AS(empty({huge, huge}), doctest::Contains("beyond 2^63 elements"), gr::Error);
  CHECK_THROWS_WITH_AS(empty({0, huge, huge}), doctest::Contains("beyond 2^63 elements"), gr::Error);
  CHECK_THROWS_WITH_AS(empty({int64_t{1} << 61}, kFloat64), doctest::Contains("more than 2^63 bytes"), gr::Error);
  CHECK_THROWS_WITH_AS(from_blob(nullptr, {huge, huge}), doctest::Contains("beyond 2^63 elements"), gr::Error);
  CHECK_THROWS_WITH_AS(arange(0, 5, 0), doctest::Contains("step must be nonzero"), gr::Error);
  CHECK_THROWS_WITH_AS(arange(5, 0, 1), doctest::Contains("inconsistent"), gr::Error);
  CHECK_THROWS_WITH_AS(randint(3, 3, {2}), doctest::Contains("low < high"), gr::Error);
  CHECK_THROWS_WITH_AS(randn({2}, kInt64), doctest::Contains("floating point"), gr::Error);
  CHECK_THROWS_WITH_AS(zeros({2}, kInt64).set_requires_grad(true), doctest::Contains("floating point"), gr::Error);
  CHECK_THROWS_WITH_AS(Device("tpu"), doctest::Contains("unknown device"), gr::Error);
  CHECK_THROWS_AS(Device("cuda:x"), gr::Error);
}

TEST_CASE("errors carry the call site") {
  try {
    zeros({-1});
    FAIL("expected an error");
  } catch (const gr::Error& e) {
    std::string what = e.what();
    CHECK(what.find("factory.cpp:") != std::string::npos);
    CHECK(e.message().find("factory.cpp") == std::string::npos);
  }
}

TEST_CASE("from_blob wraps memory without copying and runs the deleter") {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data.data(), {2, 3});
  CHECK(t.data_ptr<float>() == data.data());
  data[4] = 50;
  CHECK(t[1][1].item<float>() == 50);
  bool deleted = false;
  {
    Tensor owned = from_blob(data.data(), {6}, [&](void*) { deleted = true; });
  }
  CHECK(deleted);
  Tensor strided = from_blob(data.data(), {3}, {2});
  check_values(strided, {1, 3, 50});
}

TEST_CASE("dtype conversion, item and data_ptr checks") {
  Tensor f = tensor({1.5, -2.5, 3.25});
  check_values(f.to(kFloat64), {1.5, -2.5, 3.25});
  check_values(f.to(kInt64), {1, -2, 3});  // truncation toward zero, like torch
  check_values(f.to(kBool), {1, 1, 1});
  check_values(tensor({0.0, 2.0}).to(kBool).to(kFloat32), {0, 1});
  CHECK(f[1].item<double>() == -2.5);
  CHECK(f[0].item().to_double() == 1.5);
  CHECK_THROWS_WITH_AS(f.item(), doctest::Contains("3 elements"), gr::Error);
  CHECK_THROWS_WITH_AS(f.data_ptr<double>(), doctest::Contains("float32"), gr::Error);
}

TEST_CASE("bfloat16 and float16 round trip with round-to-nearest-even") {
  Tensor v = tensor({1.0, 0.1, -3.5, 65504.0, 1e-6, 70000.0}, kFloat32);
  Tensor h = v.to(kFloat16);
  CHECK(h.element_size() == 2);
  std::vector<double> back = values(h.to(kFloat32));
  CHECK(back[0] == 1.0);
  CHECK(back[1] == doctest::Approx(0.0999755859375));
  CHECK(back[2] == -3.5);
  CHECK(back[3] == 65504.0);
  CHECK(back[4] == doctest::Approx(1.013278961181640625e-06));  // subnormal half
  CHECK(std::isinf(back[5]));                                    // overflow
  std::vector<double> bf = values(v.to(kBFloat16).to(kFloat32));
  CHECK(bf[0] == 1.0);
  CHECK(bf[1] == doctest::Approx(0.10009765625));
  CHECK(bf[2] == -3.5);
  CHECK(bf[3] == 65536.0);
  // Ties go to even: 1 + 2^-8 lies halfway between two bfloat16 values.
  CHECK(values(tensor({1.00390625}, kFloat32).to(kBFloat16).to(kFloat32))[0] == 1.0);
  CHECK(values(tensor({1.01171875}, kFloat32).to(kBFloat16).to(kFloat32))[0] == 1.015625);
  CHECK(std::isnan(values(tensor({NAN}, kFloat32).to(kBFloat16).to(kFloat32))[0]));
  CHECK(std::isnan(values(tensor({NAN}, kFloat32).to(kFloat16).to(kFloat32))[0]));
}

TEST_CASE("printing follows libtorch's layout") {
  std::ostringstream out;
  out << tensor({1, 2, 3, 4}).reshape({2, 2});
  CHECK(out.str() == " 1 2\n 3 4\n[ CPULongType{2,2} ]");
  std::ostringstream f;
  f << tensor({0.5, -1.25});
  CHECK(f.str() == "  0.5000\n -1.2500\n[ CPUFloatType{2} ]");
  std::ostringstream s;
  s << scalar_tensor(2.0, kFloat64);
  CHECK(s.str() == " 2\n[ CPUDoubleType{} ]");
  std::ostringstream three;
  three << arange(8).reshape({2, 2, 2});
  CHECK(three.str().find("(1,.,.) = ") != std::string::npos);
  CHECK(three.str().find("(2,.,.) = ") != std::string::npos);
  CHECK(zeros({2, 3}).toString() == "CPUFloatType{2,3}");
}

TEST_CASE("equal and allclose") {
  CHECK(tensor({1.0, 2.0}).equal(tensor({1.0, 2.0})));
  CHECK_FALSE(tensor({1.0, 2.0}).equal(tensor({1.0, 2.5})));
  CHECK_FALSE(tensor({1.0, 2.0}).equal(tensor({1.0, 2.0}, kFloat64)));
  CHECK(tensor({1.0, 2.0}).allclose(tensor({1.0, 2.0000001})));
  CHECK_FALSE(tensor({1.0, 2.0}).allclose(tensor({1.0, 2.1})));
  CHECK_FALSE(tensor({NAN}).allclose(tensor({NAN})));
  CHECK(tensor({INFINITY}).allclose(tensor({INFINITY})));
}

TEST_CASE("set_num_threads validates and takes effect") {
  int before = get_num_threads();
  set_num_threads(1);
  CHECK(get_num_threads() == 1);
  set_num_threads(before);
  CHECK_THROWS_AS(set_num_threads(0), gr::Error);
}

TEST_CASE("the CPU allocator caches large blocks and reuses them") {
  CpuCacheStats before = cpu_cache_stats();
  if (before.cache_limit == 0) return;  // disabled by GRADRING_CPU_CACHE_MB=0
  { Tensor big = empty({1 << 20}); }  // 4 MiB goes back into the cache
  CpuCacheStats mid = cpu_cache_stats();
  CHECK(mid.cached_bytes >= before.cached_bytes + (4u << 20));
  Tensor again = empty({1 << 20});
  CpuCacheStats after = cpu_cache_stats();
  CHECK(after.hits == mid.hits + 1);
  CHECK(after.cached_bytes == mid.cached_bytes - (4u << 20));
  cpu_empty_cache();
  CHECK(cpu_cache_stats().cached_bytes == 0);
}
