// The kernels that read bool tensors as bytes (Note [Bools read as bytes]), any/all's byte folds
// (Note [Byte folds]) and the masks' compactions (Note [Compaction without branches]) against
// plain loops over test::values: vector bodies and tails, strided and broadcast operands, dtypes.
#include <cmath>

#include "test_util.h"

using namespace gr;

namespace {
// Values in [-5, 5) with zeros among them, in dtype t.
Tensor values_of(std::vector<int64_t> shape, uint64_t seed, ScalarType t = kFloat32) {
  Generator g(seed);
  Tensor x = (rand(shape, TensorOptions(kFloat32), &g) * 10 - 5).floor();
  return t == kBool ? x.gt(0) : x.to(t);
}
Tensor mask_of(std::vector<int64_t> shape, uint64_t seed, double p = 0.5) {
  Generator g(seed);
  return rand(shape, TensorOptions(kFloat32), &g).lt(p);
}
// The same values with transposed strides (2-d).
Tensor strided(const Tensor& t) { return t.t().contiguous().t(); }
const std::vector<std::vector<int64_t>> kShapes = {{37, 53}, {1, 1}, {0, 5}, {3, 4099}, {2, 31}};
}  // namespace

TEST_CASE("where reads its condition as bytes: every overload, dtypes, tails, strides, broadcasts") {
  for (ScalarType t : {kFloat32, kFloat64, kInt64, kBool, kBFloat16}) {
    for (const auto& shape : kShapes) {
      CAPTURE(t);
      CAPTURE(shape);
      Tensor c = mask_of(shape, 1), a = values_of(shape, 2, t), b = values_of(shape, 3, t);
      const std::vector<double> vc = test::values(c), va = test::values(a), vb = test::values(b);
      std::vector<double> want(vc.size()), with_number(vc.size()), number_first(vc.size());
      for (size_t i = 0; i < vc.size(); ++i) {
        want[i] = vc[i] != 0 ? va[i] : vb[i];
        with_number[i] = vc[i] != 0 ? va[i] : 1;
        number_first[i] = vc[i] != 0 ? 1 : vb[i];
      }
      CHECK(test::values(where(c, a, b)) == want);
      CHECK(test::values(where(strided(c), strided(a), b)) == want);
      CHECK(test::values(where(c, a, 1)) == with_number);
      CHECK(test::values(where(strided(c), a, 1)) == with_number);
      CHECK(test::values(where(c, 1, b)) == number_first);
      CHECK(test::values(a.where(c, b)) == want);
      if (shape[0] > 0) {  // a condition broadcast over rows
        Tensor row = c.narrow(0, 0, 1);
        CHECK(where(row, a, b).equal(where(row.expand(shape).contiguous(), a, b)));
      }
    }
  }
  // Two numbers.
  Tensor c = mask_of({5, 33}, 4);
  const std::vector<double> vc = test::values(c);
  std::vector<double> want(vc.size());
  for (size_t i = 0; i < vc.size(); ++i) want[i] = vc[i] != 0 ? 2.5 : -1;
  Tensor w = where(c, 2.5, -1);
  CHECK(w.scalar_type() == kFloat32);
  CHECK(test::values(w) == want);
}

TEST_CASE("logical ops, comparisons and copies of bool tensors read bytes") {
  for (const auto& shape : kShapes) {
    CAPTURE(shape);
    Tensor a = mask_of(shape, 5), b = mask_of(shape, 6);
    const std::vector<double> va = test::values(a), vb = test::values(b);
    std::vector<double> land(va.size()), lor(va.size()), lxor(va.size()), lnot(va.size()), eq(va.size());
    for (size_t i = 0; i < va.size(); ++i) {
      land[i] = va[i] != 0 && vb[i] != 0;
      lor[i] = va[i] != 0 || vb[i] != 0;
      lxor[i] = (va[i] != 0) != (vb[i] != 0);
      lnot[i] = va[i] == 0;
      eq[i] = va[i] == vb[i];
    }
    CHECK(test::values(a.logical_and(b)) == land);
    CHECK(test::values(strided(a).logical_and(b)) == land);
    CHECK(test::values(a.logical_or(strided(b))) == lor);
    CHECK(test::values(a.logical_xor(b)) == lxor);
    CHECK(test::values(a.logical_not()) == lnot);
    CHECK(test::values(strided(a).logical_not()) == lnot);
    CHECK(test::values(a.eq(b)) == eq);
    CHECK(test::values(a.to(kFloat32)) == va);  // the copy's conversion reads bytes too
    CHECK(test::values(strided(a).to(kInt64)) == va);
  }
}

TEST_CASE("any and all fold bytes: every row length, one odd element at every place") {
  for (int64_t n : {0, 1, 31, 32, 33, 64, 95, 100}) {
    for (ScalarType t : {kBool, kUInt8}) {
      CAPTURE(n);
      CAPTURE(t);
      // Row r of `one` has one set element, at r (row n: none); `all_but` is its complement.
      Tensor one = zeros({n + 1, n}, t);
      for (int64_t r = 0; r < n; ++r) one.index_put_({r, r}, t == kBool ? 1 : 7);
      Tensor all_but = one.eq(0).to(t);
      for (int64_t dim : {1, 0}) {
        CAPTURE(dim);
        Tensor any = one.any(dim), all = all_but.all(dim);
        const std::vector<double> va = test::values(any), vl = test::values(all);
        const int64_t outputs = dim == 1 ? n + 1 : n;
        REQUIRE(static_cast<int64_t>(va.size()) == outputs);
        for (int64_t r = 0; r < outputs; ++r) {
          const bool has = dim == 1 ? r < n : true;  // column r holds row r's element (n > 0)
          CHECK(va[r] == (has ? 1 : 0));
          CHECK(vl[r] == (has ? 0 : 1));
        }
      }
      CHECK(one.any().item<double>() == (n > 0 ? 1 : 0));
      CHECK(all_but.all().item<double>() == (n > 0 ? 0 : 1));
      CHECK(ones({n}, t).all().item<double>() == 1);
    }
  }
  // Strided rows, and the sum and count of bools (the other folds of bytes).
  Tensor m = mask_of({37, 53}, 7);
  CHECK(strided(m).any(1).equal(m.any(1)));
  CHECK(strided(m).all(0).equal(m.all(0)));
  const std::vector<double> vm = test::values(m);
  double set = 0;
  for (double v : vm) set += v;
  CHECK(m.sum().item<double>() == set);
  CHECK(m.count_nonzero().item<double>() == set);
  CHECK(m.sum(1).to(kFloat64).sum().item<double>() == set);
}

namespace {
// nonzero by a plain loop: the row-major coordinates of x's nonzero elements, flattened.
std::vector<double> nonzero_reference(const Tensor& x) {
  const std::vector<double> v = test::values(x);
  std::vector<double> out;
  std::vector<int64_t> coord(x.dim(), 0);
  for (double e : v) {
    if (e != 0 || std::isnan(e))
      for (int64_t c : coord) out.push_back(static_cast<double>(c));
    for (int64_t d = x.dim() - 1; d >= 0 && ++coord[d] == x.size(d); --d) coord[d] = 0;
  }
  return out;
}
}  // namespace

TEST_CASE("nonzero's compaction equals the plain loop") {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {70}, {37, 53}, {0, 5}, {4, 0}, {3, 5, 7}, {2, 3, 4, 5}};
  for (ScalarType t : {kBool, kFloat32, kInt64, kUInt8, kBFloat16}) {
    for (const auto& shape : shapes) {
      CAPTURE(t);
      CAPTURE(shape);
      Tensor x = values_of(shape, 8, t);
      Tensor nz = x.nonzero();
      CHECK(nz.scalar_type() == kInt64);
      CHECK(nz.size(1) == x.dim());
      CHECK(test::values(nz) == nonzero_reference(x));
      if (x.dim() == 2) CHECK(strided(x).nonzero().equal(nz));
    }
  }
  // The last element set or not, all set, none set, NaN (nonzero).
  Tensor v = zeros({40}, kFloat32);
  CHECK(v.nonzero().size(0) == 0);
  v.index_put_({39}, NAN);
  CHECK(test::values(v.nonzero()) == std::vector<double>{39});
  CHECK(test::values(ones({2, 2}, kBool).nonzero()) == std::vector<double>{0, 0, 0, 1, 1, 0, 1, 1});
  // where(condition) is nonzero's columns.
  Tensor c = mask_of({6, 9}, 9);
  std::vector<Tensor> cols = where(c);
  REQUIRE(cols.size() == 2);
  CHECK(cols[1].equal(c.nonzero().select(1, 1)));
}

TEST_CASE("masked_select's compaction equals the plain loop, broadcasts and strides included") {
  for (ScalarType t : {kFloat32, kFloat64, kInt64, kBool, kBFloat16}) {
    for (const auto& shape : kShapes) {
      CAPTURE(t);
      CAPTURE(shape);
      Tensor x = values_of(shape, 10, t), m = mask_of(shape, 11);
      const std::vector<double> vx = test::values(x), vm = test::values(m);
      std::vector<double> want;
      for (size_t i = 0; i < vx.size(); ++i)
        if (vm[i] != 0) want.push_back(vx[i]);
      Tensor got = x.masked_select(m);
      CHECK(got.dim() == 1);
      CHECK(got.scalar_type() == t);
      CHECK(test::values(got) == want);
      CHECK(test::values(strided(x).masked_select(strided(m))) == want);
      if (shape[0] > 0) {  // the mask broadcast over rows, and self broadcast over the mask
        Tensor row = m.narrow(0, 0, 1);
        CHECK(x.masked_select(row).equal(x.masked_select(row.expand(shape).contiguous())));
        Tensor xrow = x.narrow(0, 0, 1);
        CHECK(xrow.masked_select(m).equal(xrow.expand(shape).contiguous().masked_select(m)));
      }
    }
  }
  Tensor x = values_of({4, 5}, 12);
  CHECK(x.masked_select(zeros({4, 5}, kBool)).numel() == 0);
  CHECK(x.masked_select(ones({4, 5}, kBool)).equal(x.reshape({-1})));
}

TEST_CASE("masked_scatter's compaction equals the plain loop, in place and out of place") {
  for (ScalarType t : {kFloat32, kInt64, kBool, kBFloat16}) {
    for (const auto& shape : kShapes) {
      CAPTURE(t);
      CAPTURE(shape);
      Tensor x = values_of(shape, 13, t), m = mask_of(shape, 14);
      int64_t numel = 1;
      for (int64_t s : shape) numel *= s;
      Tensor src = values_of({numel + 3}, 15, t);  // more than enough: the first ones are used
      const std::vector<double> vx = test::values(x), vm = test::values(m), vs = test::values(src);
      std::vector<double> want = vx;
      size_t k = 0;
      for (size_t i = 0; i < vx.size(); ++i)
        if (vm[i] != 0) want[i] = vs[k++];
      CHECK(test::values(x.masked_scatter(m, src)) == want);
      CHECK(test::values(strided(x).masked_scatter(strided(m), src)) == want);
      Tensor y = x.clone();
      y.masked_scatter_(m, src);
      CHECK(test::values(y) == want);
      Tensor z = strided(x);  // not contiguous: the general path
      z.masked_scatter_(m, src);
      CHECK(test::values(z) == want);
      // Exactly as many source elements as set positions.
      Tensor exact = src.narrow(0, 0, static_cast<int64_t>(k));
      CHECK(test::values(x.masked_scatter(m, exact)) == want);
    }
  }
  // Too few source elements: the op's error, and self unchanged.
  Tensor x = zeros({3, 4}, kFloat32), before = x.clone();
  Tensor m = ones({3, 4}, kBool);
  CHECK(test::error_of([&] { x.masked_scatter_(m, ones({11}, kFloat32)); })
            .find("masked_scatter_: expected source to have at least 12 elements") != std::string::npos);
  CHECK(x.equal(before));
}
