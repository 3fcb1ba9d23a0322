// Transforms: exact values, zero padding, reproducibility from a seed, batch == examples, and
// the batch generator random transforms draw from.
#include <set>

#include "test_util.h"

using namespace gr;
namespace tf = gr::data::transforms;

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
  tf::Normalize<> norm({1, 2}, {2, 4});
  Tensor y = norm(tensor({1, 3, 2, 10, 5, 7, 6, 14}, kFloat32).reshape({2, 2, 1, 2}));
  test::check_values(y, {0, 1, 0, 2, 2, 3, 1, 3});
  // One value for all channels; a single image [C, H, W] stays 3-D; float64 stays float64.
  Tensor z = tf::Normalize<>(0.5, 0.25)(full({3, 2, 2}, 1.0, kFloat64));
  CHECK(z.scalar_type() == kFloat64);
  CHECK(test::shape(z) == std::vector<int64_t>{3, 2, 2});
  test::check_values(z, std::vector<double>(12, 2.0));
  CHECK_THROWS_WITH_AS(norm(zeros({1, 3, 2, 2})), doctest::Contains("2 mean/std values for an input with 3 channels"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(norm(zeros({2, 2, 2}, kInt64)), doctest::Contains("float32 or float64"), gr::Error);
  CHECK_THROWS_WITH_AS(norm(zeros({2, 2})), doctest::Contains("[C, H, W]"), gr::Error);
  CHECK_THROWS_AS(tf::Normalize<>({0, 0}, {1}), gr::Error);
  CHECK_THROWS_AS(tf::Normalize<>(0, 0), gr::Error);
}

TEST_CASE("RandomCrop takes a window of the zero-padded image, every offset possible") {
  const int64_t n = 200, p = 1;
  Tensor x = counting(n, 2, 4, 4).add(1);  // no zeros inside the image
  Generator gen(7);
  Tensor y = tf::RandomCrop<>(4, p)(x, gen);
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
  CHECK(tf::RandomCrop<>(4)(x, gen).equal(x));
  // Smaller crops, non-square, uint8.
  Tensor u = counting(3, 1, 5, 6).to(kUInt8);
  Tensor c = tf::RandomCrop<>(2, 3, 0)(u, gen);
  CHECK(c.scalar_type() == kUInt8);
  CHECK(test::shape(c) == std::vector<int64_t>{3, 1, 2, 3});
  CHECK_THROWS_WITH_AS(tf::RandomCrop<>(7, 1)(x), doctest::Contains("larger than the padded image 6x6"), gr::Error);
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
  CHECK(tf::RandomHorizontalFlip<>(0)(x, gen).equal(x));
  CHECK(tf::RandomHorizontalFlip<>(1)(x, gen).equal(mirrored));
  Tensor y = tf::RandomHorizontalFlip<>(0.25)(x, gen);
  int flipped = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool same = y[i].equal(x[i]), flip = y[i].equal(mirrored[i]);
    CHECK(same != flip);
    flipped += flip;
  }
  CHECK(flipped > 60);  // about 100 expected
  CHECK(flipped < 140);
  CHECK_THROWS_AS(tf::RandomHorizontalFlip<>(1.5), gr::Error);
}

TEST_CASE("random transforms are reproducible and a batch equals its examples in order") {
  Tensor x = counting(16, 3, 6, 6);
  tf::RandomCrop<> crop(6, 2);
  tf::RandomHorizontalFlip<> flip;
  auto augment = [&](const Tensor& t, Generator& gen) { return flip(crop(t, gen), gen); };
  Generator a(11), b(11), c(12);
  Tensor ya = augment(x, a), yb = augment(x, b), yc = augment(x, c);
  CHECK(ya.equal(yb));
  CHECK(!ya.equal(yc));
  // A second batch from the same generator continues the stream: different again.
  CHECK(!augment(x, a).equal(ya));

  tf::RandomCrop<> small_crop(4, 1);
  Generator batch_gen(5), example_gen(5);
  Tensor batch = small_crop(x, batch_gen);
  for (int64_t i = 0; i < x.size(0); ++i) CHECK(batch[i].equal(small_crop(x[i], example_gen)));
  Generator flip_batch(6), flip_example(6);
  Tensor flipped = flip(x, flip_batch);
  for (int64_t i = 0; i < x.size(0); ++i) CHECK(flipped[i].equal(flip(x[i], flip_example)));
}

TEST_CASE("random transforms draw from the batch generator: the default one outside a loader, the batch's inside") {
  CHECK(&data::batch_generator() == &default_generator());
  Tensor x = counting(8, 1, 5, 5);
  tf::RandomCrop<> crop(5, 2);
  Tensor inside, again;
  {
    data::detail::BatchScope scope(/*seed=*/4, /*epoch=*/1, /*index=*/2, /*pin=*/false);
    CHECK(data::batch_generator().seed() == data::detail::batch_seed(4, 1, 2));
    CHECK(!data::detail::batch_pinned());
    {
      data::detail::BatchScope nested(4, 1, 3, /*pin=*/true);
      CHECK(data::batch_generator().seed() == data::detail::batch_seed(4, 1, 3));
      CHECK(data::detail::batch_pinned());
    }
    CHECK(data::batch_generator().seed() == data::detail::batch_seed(4, 1, 2));  // the outer scope is back
    inside = crop(x);
  }
  CHECK(&data::batch_generator() == &default_generator());
  {
    data::detail::BatchScope scope(4, 1, 2, false);
    again = crop(x);
  }
  CHECK(inside.equal(again));
  Generator explicit_gen(data::detail::batch_seed(4, 1, 2));
  CHECK(inside.equal(crop(x, explicit_gen)));
  CHECK(data::detail::batch_seed(4, 1, 2) != data::detail::batch_seed(4, 2, 1));
}

TEST_CASE("TensorTransforms chain with map(), on examples or on a stacked batch") {
  struct Images : data::datasets::Dataset<Images> {
    Tensor x = counting(2, 1, 3, 3);
    data::Example<> get(size_t i) override { return {x[static_cast<int64_t>(i)], scalar_tensor(int64_t{0}, kInt64)}; }
    std::optional<size_t> size() const override { return 2; }
  };
  std::vector<size_t> idx = {0, 1};
  auto before = Images().map(tf::RandomHorizontalFlip<>(1)).map(tf::Normalize<>(4, 2)).map(tf::Stack<>());
  auto after = Images().map(tf::Stack<>()).map(tf::RandomHorizontalFlip<>(1)).map(tf::Normalize<>(4, 2));
  Tensor y = before.get_batch(idx).data;
  test::check_values(y[0], {-1, -1.5, -2, 0.5, 0, -0.5, 2, 1.5, 1});
  CHECK(y.equal(after.get_batch(idx).data));
  auto doubled = Images().map(tf::Stack<>()).map(tf::TensorLambda<>([](Tensor t) { return t * 2; }));
  test::check_values(doubled.get_batch(idx).data[1][0][0], {18, 20, 22});
}
