// Transforms: exact values, zero padding, reproducibility from a seed, and batch == examples.
#include <set>

#include "data/transforms.h"
#include "test_util.h"

using namespace gr;

namespace {

// [n, c, h, w] float32 holding 0, 1, 2, ...
Tensor counting(int64_t n, int64_t c, int64_t h, int64_t w) {
  return arange(n * c * h * w, kFloat32).reshape({n, c, h, w});
}

// x[top:top+h, left:left+w] of x zero-padded by p, for one image [C, H, W] (reference crop).
Tensor reference_crop(const Tensor& x, int64_t top, int64_t left, int64_t h, int64_t w, int64_t p) {
  Tensor padded = zeros({x.size(0), x.size(1) + 2 * p, x.size(2) + 2 * p}, kFloat32);
  padded.slice(1, p, p + x.size(1)).slice(2, p, p + x.size(2)).copy_(x);
  return padded.slice(1, top, top + h).slice(2, left, left + w).contiguous();
}

}  // namespace

TEST_CASE("to_unit_float maps uint8 to [0, 1] like x / 255") {
  Tensor u = tensor({0, 51, 128, 255}, kFloat64).to(kUInt8);
  Tensor f = data::to_unit_float(u);
  CHECK(f.scalar_type() == kFloat32);
  test::check_values(f, {0, 0.2, 128.0f / 255.0f, 1}, 1e-7);
  CHECK_THROWS_WITH_AS(data::to_unit_float(zeros({2})), doctest::Contains("uint8"), gr::Error);
}

TEST_CASE("Normalize subtracts the mean and divides by the std per channel") {
  data::Normalize norm({1, 2}, {2, 4});
  Tensor y = norm(tensor({1, 3, 2, 10, 5, 7, 6, 14}, kFloat32).reshape({2, 2, 1, 2}));
  test::check_values(y, {0, 1, 0, 2, 2, 3, 1, 3});
  // One value for all channels; a single image [C, H, W] stays 3-D; float64 stays float64.
  Tensor z = data::Normalize({0.5}, {0.25})(full({3, 2, 2}, 1.0, kFloat64));
  CHECK(z.scalar_type() == kFloat64);
  CHECK(test::shape(z) == std::vector<int64_t>{3, 2, 2});
  test::check_values(z, std::vector<double>(12, 2.0));
  CHECK_THROWS_WITH_AS(norm(zeros({1, 3, 2, 2})), doctest::Contains("2 mean/std values for an input with 3 channels"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(norm(zeros({2, 2, 2}, kInt64)), doctest::Contains("float32 or float64"), gr::Error);
  CHECK_THROWS_WITH_AS(norm(zeros({2, 2})), doctest::Contains("[C, H, W]"), gr::Error);
  CHECK_THROWS_AS(data::Normalize({0, 0}, {1}), gr::Error);
  CHECK_THROWS_AS(data::Normalize({0}, {0}), gr::Error);
}

TEST_CASE("RandomCrop takes a window of the zero-padded image, every offset possible") {
  const int64_t n = 200, p = 1;
  Tensor x = counting(n, 2, 4, 4).add(1);  // no zeros inside the image
  Generator gen(7);
  Tensor y = data::RandomCrop(4, p)(x, &gen);
  CHECK(test::shape(y) == std::vector<int64_t>{n, 2, 4, 4});
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < n; ++i) {
    int matches = 0;
    for (int64_t top = 0; top <= 2 * p; ++top) {
      for (int64_t left = 0; left <= 2 * p; ++left) {
        if (y[i].equal(reference_crop(x[i], top, left, 4, 4, p))) {
          ++matches;
          seen.insert({top, left});
        }
      }
    }
    CHECK(matches == 1);
  }
  CHECK(seen.size() == 9);
  // No padding and the full size: the identity.
  CHECK(data::RandomCrop(4)(x, &gen).equal(x));
  // Smaller crops, non-square, uint8.
  Tensor u = counting(3, 1, 5, 6).to(kUInt8);
  Tensor c = data::RandomCrop(2, 3, 0)(u, &gen);
  CHECK(c.scalar_type() == kUInt8);
  CHECK(test::shape(c) == std::vector<int64_t>{3, 1, 2, 3});
  CHECK_THROWS_WITH_AS(data::RandomCrop(7, 1)(x), doctest::Contains("larger than the padded image 6x6"), gr::Error);
}

TEST_CASE("RandomHorizontalFlip mirrors each image with probability p") {
  const int64_t n = 400, w = 5;
  Tensor x = counting(n, 3, 2, w);
  Tensor mirrored = empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = mirrored.data_ptr<float>();
  for (int64_t row = 0; row < x.numel() / w; ++row) {
    for (int64_t j = 0; j < w; ++j) dst[row * w + j] = src[row * w + w - 1 - j];
  }
  Generator gen(3);
  CHECK(data::RandomHorizontalFlip(0)(x, &gen).equal(x));
  CHECK(data::RandomHorizontalFlip(1)(x, &gen).equal(mirrored));
  Tensor y = data::RandomHorizontalFlip(0.25)(x, &gen);
  int flipped = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool same = y[i].equal(x[i]), flip = y[i].equal(mirrored[i]);
    CHECK(same != flip);
    flipped += flip;
  }
  CHECK(flipped > 60);  // about 100 expected
  CHECK(flipped < 140);
  CHECK_THROWS_AS(data::RandomHorizontalFlip(1.5), gr::Error);
}

TEST_CASE("random transforms are reproducible and a batch equals its examples in order") {
  Tensor x = counting(16, 3, 6, 6);
  data::Compose augment(data::RandomCrop(6, 2), data::RandomHorizontalFlip());
  Generator a(11), b(11), c(12);
  Tensor ya = augment(x, &a), yb = augment(x, &b), yc = augment(x, &c);
  CHECK(ya.equal(yb));
  CHECK(!ya.equal(yc));
  // A second batch from the same generator continues the stream: different again.
  CHECK(!augment(x, &a).equal(ya));

  std::vector<std::shared_ptr<const data::Transform>> randoms = {std::make_shared<data::RandomCrop>(4, 1),
                                                                 std::make_shared<data::RandomHorizontalFlip>()};
  for (const auto& t : randoms) {
    Generator batch_gen(5), example_gen(5);
    Tensor batch = (*t)(x, &batch_gen);
    for (int64_t i = 0; i < x.size(0); ++i) CHECK(batch[i].equal((*t)(x[i], &example_gen)));
  }
}

TEST_CASE("Compose applies transforms in order") {
  Tensor x = counting(2, 1, 3, 3);
  data::Compose both(data::RandomHorizontalFlip(1), data::Normalize({4}, {2}));
  test::check_values(both(x)[0], {-1, -1.5, -2, 0.5, 0, -0.5, 2, 1.5, 1});
  auto shared = std::make_shared<const data::Normalize>(std::vector<double>{1}, std::vector<double>{1});
  data::Compose from_list({shared, shared});
  test::check_values(from_list(x)[0][0][0], {-2, -1, 0});
  CHECK_THROWS_AS(data::Compose({nullptr}), gr::Error);
}
