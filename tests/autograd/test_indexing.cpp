// Shape and indexing ops beyond the PyTorch values (test_index_reference.cpp): views share
// storage, libtorch's spellings compile and behave, strided and threaded kernels agree with
// plain loops, index_put_ records history, and every error names the op, shapes and index.
#include "test_util.h"

using namespace gr;
using namespace gr::indexing;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::error_of;

namespace {
Tensor longs(std::vector<int64_t> v) { return tensor(v, kInt64); }
Tensor seeded(std::vector<int64_t> shape, uint64_t seed, ScalarType dtype = kFloat64) {
  Generator g(seed);
  return randn(shape, TensorOptions(dtype), &g);
}
}  // namespace

TEST_CASE("shape views share storage and write through") {
  Tensor x = arange(24, kFloat64).reshape({2, 3, 4});
  Tensor d = x.diagonal(1, 1, 2);
  CHECK(d.storage().is_same(x.storage()));
  check_values(d, {1, 6, 11, 13, 18, 23});
  d.fill_(-1);
  CHECK(x.index({1, 2, 3}).item<double>() == -1);
  for (const Tensor& part : x.chunk(2, 2)) CHECK(part.storage().is_same(x.storage()));
  for (const Tensor& part : x.split({1, 2}, 1)) CHECK(part.storage().is_same(x.storage()));
  for (const Tensor& part : x.unbind(0)) CHECK(part.storage().is_same(x.storage()));
  for (const Tensor& part : x.tensor_split(IntArrayRef{1, 3}, 2)) CHECK(part.storage().is_same(x.storage()));
  CHECK(x.movedim(0, 2).storage().is_same(x.storage()));
  CHECK(x.unflatten(2, {2, 2}).storage().is_same(x.storage()));
  CHECK(x.select(0, 0).broadcast_to({5, 3, 4}).storage().is_same(x.storage()));
  CHECK(x.index({Slice(), 1, Slice(None, None, 2)}).storage().is_same(x.storage()));
  CHECK(x.index({"..."}).storage().is_same(x.storage()));
  // Copies do not alias.
  CHECK_FALSE(x.flip({0}).storage().is_same(x.storage()));
  CHECK_FALSE(x.index({longs({0})}).storage().is_same(x.storage()));
}

TEST_CASE("split's backward: gradients lying side by side become the whole gradient; any other layout is concatenated") {
  // Note [Packed qkv gradients]: adjacent views in one storage are taken as they are.
  Tensor x = seeded({4, 6}, 1).requires_grad_(true);
  Tensor g = seeded({4, 6}, 2);
  std::vector<Tensor> parts = x.split(2, 1);
  autograd::backward(parts, {g.narrow(1, 0, 2), g.narrow(1, 2, 2), g.narrow(1, 4, 2)});
  CHECK(equal(x.grad(), g));
  // The same views in another order, and separate tensors, are concatenated.
  x.mutable_grad() = Tensor();
  parts = x.split(2, 1);
  autograd::backward(parts, {g.narrow(1, 2, 2), g.narrow(1, 0, 2), g.narrow(1, 4, 2).clone()});
  CHECK(equal(x.grad(), cat({g.narrow(1, 2, 2), g.narrow(1, 0, 2), g.narrow(1, 4, 2)}, 1)));
}

TEST_CASE("a libtorch program's indexing compiles and behaves as in libtorch") {
  Tensor x = arange(20, kFloat32).reshape({4, 5});
  check_values(x.index({Slice(None, 2), Slice(3, None)}), {3, 4, 8, 9});
  check_values(x.index({Slice(), -1}), {4, 9, 14, 19});
  CHECK(x.index({None, Ellipsis, None}).sizes() == IntArrayRef({1, 4, 5, 1}));
  CHECK(x.index({x.gt(17)}).sizes() == IntArrayRef({2}));
  x.index_put_({Slice(), 0}, 100);
  x.index_put_({x.lt(3)}, -1);
  x.index_put_({"...", Slice(4, None)}, tensor({7.0, 8.0, 9.0, 10.0}, kFloat32).unsqueeze(1));
  check_values(x.index({Slice(), Slice(None, None, 4)}), {100, 7, 100, 8, 100, 9, 100, 10});
  check_values(x.index({0}), {100, -1, -1, 3, 7});
  // The list form of at::index / at::index_put_, with nullopt for a whole dim.
  Tensor y = arange(24, kFloat64).reshape({2, 3, 4});
  Tensor i = longs({2, 0});
  CHECK(index(y, {std::nullopt, i}).equal(y.index({Slice(), i})));
  y.index_put_({std::nullopt, i}, zeros({2, 2, 4}, kFloat64), false);
  CHECK(y.index({Slice(), i}).abs().sum().item<double>() == 0);
  std::vector<TensorIndex> expr = {Slice(1, 3), 0};
  std::ostringstream text;
  text << expr;
  CHECK(text.str() == "(1:3:1, 0)");
}

TEST_CASE("index_put_ and in-place ops record history on self") {
  Tensor x = seeded({3, 4}, 1).requires_grad_(true);
  Tensor v = seeded({4}, 2).requires_grad_(true);
  Tensor y = x * 2;
  y.index_put_({1}, v);
  CHECK(y.grad_fn()->name() == "IndexPutBackward0");
  (y * y).sum().backward();
  Tensor expected = (x.detach() * 8).index_put({longs({1})}, zeros({}, kFloat64));
  check_close(x.grad(), expected);
  check_close(v.grad(), v.detach() * 2);
  // On a leaf that requires grad, as in libtorch: refused, unless no grad is recorded.
  CHECK(error_of([&] { x.index_put_({0}, 1.0); }).find("leaf Variable that requires grad") != std::string::npos);
  {
    NoGradGuard no_grad;
    x.index_put_({0}, 1.0);
    x.masked_fill_(x.gt(0), 0.5);
  }
  CHECK(x.index({0}).sum().item<double>() == doctest::Approx(2.0));
  // index_add_ into a non-leaf passes gradients to both sides.
  Tensor w = seeded({2, 4}, 3).requires_grad_(true);
  Tensor z = x * 1;
  z.index_add_(0, longs({2, 2}), w, 3);
  z.sum().backward();
  check_values(w.grad(), std::vector<double>(8, 3.0));
}

TEST_CASE("strided inputs and threads give the same results as contiguous ones") {
  Tensor self = seeded({40, 30}, 4).t();  // [30, 40], not contiguous
  Tensor index = randint(0, 30, {50, 40}, kInt64);
  Tensor index_t = index.t().contiguous().t();  // the same values, column-major
  check_close(self.gather(0, index), self.contiguous().gather(0, index_t), 1e-15);
  check_close(self.index_select(1, longs({39, 0, 7, 7})), self.contiguous().index_select(1, longs({39, 0, 7, 7})), 1e-15);
  // scatter_add with many repeats on two threads equals a plain loop.
  const int threads = get_num_threads();
  set_num_threads(2);
  Tensor src = seeded({3000, 64}, 5, kFloat32), ix = randint(0, 7, {3000, 64}, kInt64);
  Tensor out = zeros({7, 64}, kFloat32).scatter_add(0, ix, src);
  Tensor by_row = zeros({7, 64}, kFloat64);
  Tensor src64 = src.to(kFloat64);
  for (int64_t r = 0; r < 3000; ++r) by_row = by_row.scatter_add(0, ix.narrow(0, r, 1), src64.narrow(0, r, 1));
  check_close(out.to(kFloat64), by_row, 1e-4);
  Tensor emb = seeded({100, 32}, 6, kFloat32);
  Tensor ids = randint(0, 100, {5000}, kInt64);
  Tensor grad = zeros({100, 32}, kFloat32).index_add(0, ids, ones({5000, 32}, kFloat32));
  check_values(grad.sum(IntArrayRef{1}), gr::test::values(one_hot(ids, 100).sum(IntArrayRef{0}).to(kFloat64) * 32));
  check_close(emb.index_select(0, ids), emb.index({ids}), 1e-15);
  set_num_threads(threads);
  // Other dtypes: int64 and bool move like floats.
  Tensor b = arange(6).reshape({2, 3}).gt(2);
  check_values(b.gather(1, longs({2, 0, 1, 1}).reshape({2, 2})), {0, 0, 1, 1});
  check_values(arange(6).reshape({2, 3}).scatter_add(1, longs({0, 0}).reshape({2, 1}), ones({2, 1}, kInt64)), {1, 1, 2, 4, 4, 5});
}

TEST_CASE("empty results and 0-d tensors") {
  Tensor x = seeded({3, 4}, 7);
  CHECK(x.nonzero().sizes() == IntArrayRef({12, 2}));
  CHECK(zeros({3, 4}).nonzero().sizes() == IntArrayRef({0, 2}));
  CHECK(x.index_select(0, longs({})).sizes() == IntArrayRef({0, 4}));
  CHECK(x.gather(1, zeros({3, 0}, kInt64)).sizes() == IntArrayRef({3, 0}));
  CHECK(x.index({x.gt(100)}).sizes() == IntArrayRef({0}));
  CHECK(where(x.gt(100)).size() == 2);
  Tensor s = scalar_tensor(2.5, kFloat64);
  CHECK(s.gather(0, zeros({}, kInt64)).item<double>() == 2.5);
  CHECK(std::get<0>(s.sort()).item<double>() == 2.5);
  CHECK(s.index({None}).sizes() == IntArrayRef({1}));
}

TEST_CASE("errors name the op, the shapes, the dtypes and the offending index") {
  Tensor x = seeded({2, 3}, 8, kFloat32);
  auto has = [](const std::string& message, std::initializer_list<const char*> parts) {
    CAPTURE(message);
    for (const char* p : parts) CHECK_MESSAGE(message.find(p) != std::string::npos, "missing: ", p);
  };
  has(error_of([&] { x.gather(1, longs({5, 0}).reshape({2, 1})); }),
      {"gather", "index 5 is out of bounds for dimension 1 with size 3", "[2, 3]", "float32", "[2, 1]"});
  has(error_of([&] { x.gather(1, longs({-1, 0}).reshape({2, 1})); }), {"gather", "index -1 is out of bounds"});
  has(error_of([&] { x.gather(1, longs({0, 1})); }), {"gather", "same number of dimensions", "[2]", "[2, 3]"});
  has(error_of([&] { x.gather(0, ones({2, 3}, kFloat32)); }), {"gather", "int64 or int32 index", "float32"});
  has(error_of([&] { x.scatter(0, longs({2}).reshape({1, 1}), 1.0); }), {"scatter", "index 2", "dimension 0 with size 2"});
  has(error_of([&] { x.scatter_add(1, zeros({2, 1}, kInt64), ones({2, 1}, kFloat64)); }), {"scatter_add", "float32", "float64"});
  has(error_of([&] { x.scatter(1, zeros({2, 1}, kInt64), ones({2, 1}, kFloat32), "max"); }), {"scatter", "\"add\" or \"multiply\""});
  has(error_of([&] { x.index_select(1, longs({0, 3})); }), {"index_select", "index 3 is out of bounds for dimension 1 with size 3"});
  has(error_of([&] { x.index_select(1, zeros({1, 1}, kInt64)); }), {"index_select", "vector", "[1, 1]"});
  has(error_of([&] { x.index_add(0, longs({0}), ones({2, 3}, kFloat32)); }), {"index_add_", "number of indices (1)", "(2)"});
  has(error_of([&] { x.index_copy(1, longs({0}), ones({3, 1}, kFloat32)); }), {"index_copy_", "slice shapes", "[3, 1]"});
  has(error_of([&] { x.index_fill(1, longs({-4}), 0.0); }), {"index_fill_", "index -4 is out of bounds for dimension 1"});
  has(error_of([&] { x.masked_fill(ones({2, 3}, kInt64), 0.0); }), {"masked_fill", "boolean", "int64"});
  has(error_of([&] { x.masked_fill_(ones({4, 2, 3}, kBool), 0.0); }), {"masked_fill_", "[4, 2, 3]", "[2, 3]"});
  has(error_of([&] { x.masked_fill(x.gt(0), ones({1}, kFloat32)); }), {"masked_fill", "0-dimensional", "[1]"});
  has(error_of([&] { x.masked_scatter(ones({2, 3}, kBool), ones({4}, kFloat32)); }), {"masked_scatter", "at least 6", "4"});
  has(error_of([&] { x.index({0, 1, 2}); }), {"too many indices for tensor of dimension 2"});
  has(error_of([&] { x.index({Slice(), 3}); }), {"index 3 is out of bounds for dimension 1 with size 3"});
  has(error_of([&] { x.index({longs({0, 2})}); }), {"index", "index 2 is out of bounds for dimension 0 with size 2"});
  has(error_of([&] { x.index({Slice(), longs({-4})}); }), {"index -4 is out of bounds for dimension 1 with size 3"});
  has(error_of([&] { x.index({ones({3}, kBool)}); }), {"shape of the mask [3] at index 0", "[2, 3] at index 0"});
  has(error_of([&] { x.index({longs({0, 1}), longs({0, 1, 2})}); }), {"shape mismatch", "[2], [3]"});
  has(error_of([&] { x.index({ones({1}, kFloat32)}); }), {"int64, int32, uint8 or bool", "float32"});
  has(error_of([&] { scalar_tensor(1.0).index({0}); }), {"invalid index of a 0-dim tensor"});
  has(error_of([&] { x.index({Slice(None, None, -1)}); }), {"step must be greater than zero"});
  has(error_of([&] { x.index({"...", "..."}); }), {"single ellipsis"});
  has(error_of([&] { x.index({".."}); }), {"\"...\"", "\"..\""});
  has(error_of([&] { Slice(0, 1, 0); }), {"slice step cannot be zero"});
  has(error_of([&] { x.index_put_({longs({0})}, ones({3}, kFloat64)); }), {"index_put_", "float32", "float64"});
  has(error_of([&] { x.index_put_({longs({0})}, ones({2}, kFloat32)); }), {"shape mismatch", "[2]", "[1, 3]"});
  has(error_of([&] { x.index_put_({0}, ones({2}, kFloat32)); }), {"[2]", "[3]"});
  has(error_of([&] { x.topk(4); }), {"topk", "k (4)", "size 3"});
  has(error_of([&] { one_hot(longs({-1, 2})); }), {"one_hot", "non-negative", "-1"});
  has(error_of([&] { one_hot(longs({1, 5}), 3); }), {"one_hot", "smaller than num_classes (3)", "5"});
  has(error_of([&] { one_hot(x); }), {"one_hot", "int64", "float32"});
  has(error_of([&] { x.chunk(0); }), {"chunk", "greater than 0"});
  has(error_of([&] { x.split(-1); }), {"split", "non-negative"});
  has(error_of([&] { x.split({1, 1}, 1); }), {"split_with_sizes", "sum exactly to 3", "[1, 1]"});
  has(error_of([&] { x.unflatten(1, {2, 2}); }), {"unflatten", "[2, 2]", "(3)", "[2, 3]"});
  has(error_of([&] { x.movedim({0, 0}, {0, 1}); }), {"movedim", "repeated dim in `source`"});
  has(error_of([&] { x.diagonal(0, 1, -1); }), {"diagonal", "cannot be identical"});
  has(error_of([&] { diag(zeros({2, 2, 2})); }), {"diag", "1D or 2D", "[2, 2, 2]"});
  has(error_of([&] { meshgrid({x}); }), {"meshgrid", "0D or 1D", "[2, 3]"});
  has(error_of([&] { meshgrid({longs({1})}, "yx"); }), {"meshgrid", "\"xy\" or \"ij\"", "yx"});
  has(error_of([&] { x.repeat({2}); }), {"repeat", "(1)", "(2)"});
  has(error_of([&] { x.repeat_interleave(longs({1, -1}), 0); }), {"repeat_interleave", "negative", "-1"});
  has(error_of([&] { x.flip({1, -1}); }), {"flip", "duplicates"});
  has(error_of([&] { x.roll({1, 2}, {0}); }), {"roll", "2 shifts and 1 dims"});
  has(error_of([&] { zeros({3}).tril(); }), {"tril", "at least 2 dimensions", "[3]"});
  has(error_of([&] { x.squeeze(IntArrayRef{0, -2}); }), {"squeeze", "appears multiple times"});
}
