// OpInfo entries of the reductions and linear algebra (issue 15): every differentiable op and
// overload, gradchecked in float64 by test_op_info.cpp (random inputs have no ties).
#include "op_info.h"

using namespace gr;
using gr::testing::op_input;
using gr::testing::OpInfo;

namespace {
TensorList one(std::vector<int64_t> shape, uint64_t seed) { return {op_input(shape, seed)}; }
TensorList three(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> c, uint64_t seed) {
  return {op_input(a, seed), op_input(b, seed + 1), op_input(c, seed + 2)};
}
// Values in [1, 2) and [-2, -1): products and p-norms away from zero.
Tensor away_from_zero(const Tensor& x) { return x.sign() * (x.abs() + 1); }
}  // namespace

GR_OP_INFOS(add_reduction_ops) {
  ops.push_back({"sum", [] { return one({3, 4}, 300); }, [](const TensorList& t) { return sum(t[0]); }});
  ops.push_back({"sum(dims, keepdim)", [] { return one({2, 3, 4}, 301); },
                 [](const TensorList& t) { return t[0].sum({0, 2}, true); }});
  ops.push_back({"sum(dtype)", [] { return one({3, 4}, 302); },
                 [](const TensorList& t) { return sum(t[0], {-1}, false, kFloat64); }});
  ops.push_back({"mean", [] { return one({3, 4}, 303); }, [](const TensorList& t) { return t[0].mean(); }});
  ops.push_back({"mean(dims)", [] { return one({2, 3, 4}, 304); }, [](const TensorList& t) { return mean(t[0], {1, -1}); }});
  ops.push_back({"prod", [] { return one({2, 3}, 305); }, [](const TensorList& t) { return prod(away_from_zero(t[0])); }});
  ops.push_back({"prod(dim)", [] { return one({3, 4}, 306); },
                 [](const TensorList& t) { return away_from_zero(t[0]).prod(1, true); }});
  ops.push_back({"var", [] { return one({3, 4}, 307); }, [](const TensorList& t) { return var(t[0]); }});
  ops.push_back({"var(dims, correction)", [] { return one({3, 4, 2}, 308); },
                 [](const TensorList& t) { return t[0].var({0, 2}, Scalar(0), true); }});
  ops.push_back({"var(dims, unbiased)", [] { return one({3, 4}, 309); },
                 [](const TensorList& t) { return var(t[0], {1}, false); }});
  ops.push_back({"std", [] { return one({3, 4}, 310); }, [](const TensorList& t) { return t[0].std({1}); }});
  ops.push_back({"std(correction 2)", [] { return one({6}, 311); },
                 [](const TensorList& t) { return gr::std(t[0], std::nullopt, Scalar(2)); }});
  ops.push_back({"var_mean", [] { return one({3, 4}, 312); },
                 [](const TensorList& t) { auto [v, m] = var_mean(t[0], {0}); return v * 2 + m; }});
  ops.push_back({"std_mean", [] { return one({3, 4}, 313); },
                 [](const TensorList& t) { auto [s, m] = std_mean(t[0], {1}, true, true); return s * m; }});
  ops.push_back({"norm(p=2)", [] { return one({3, 4}, 314); }, [](const TensorList& t) { return t[0].norm(); }});
  ops.push_back({"norm(p=1, dims)", [] { return one({3, 4}, 315); },
                 [](const TensorList& t) { return norm(t[0], 1, {1}); }});
  ops.push_back({"norm(p=3, dims)", [] { return one({3, 4}, 316); },
                 [](const TensorList& t) { return away_from_zero(t[0]).norm(3, {0}, true); }});
  ops.push_back({"norm(p=inf)", [] { return one({3, 4}, 317); },
                 [](const TensorList& t) { return norm(t[0], INFINITY, {1}); }});
  ops.push_back({"norm(fro)", [] { return one({2, 3, 4}, 318); },
                 [](const TensorList& t) { return norm(t[0], "fro", {1, 2}); }});
  ops.push_back({"linalg::vector_norm", [] { return one({3, 4}, 319); },
                 [](const TensorList& t) { return linalg::vector_norm(t[0], 2, {-1}, true); }});
  ops.push_back({"linalg::vector_norm(-inf)", [] { return one({3, 4}, 320); },
                 [](const TensorList& t) { return linalg::vector_norm(t[0], -INFINITY); }});
  ops.push_back({"linalg::matrix_norm(fro)", [] { return one({2, 3, 4}, 321); },
                 [](const TensorList& t) { return linalg::matrix_norm(t[0]); }});
  ops.push_back({"linalg::matrix_norm(1)", [] { return one({3, 4}, 322); },
                 [](const TensorList& t) { return linalg::matrix_norm(t[0], 1); }});
  ops.push_back({"linalg::matrix_norm(inf)", [] { return one({2, 3, 4}, 323); },
                 [](const TensorList& t) { return linalg::matrix_norm(t[0], INFINITY, {-2, -1}, true); }});
  ops.push_back({"logsumexp", [] { return one({3, 4}, 324); }, [](const TensorList& t) { return logsumexp(t[0], {1}); }});
  ops.push_back({"logsumexp(keepdim)", [] { return one({2, 3, 4}, 325); },
                 [](const TensorList& t) { return t[0].logsumexp({0, 2}, true); }});
  ops.push_back({"cumsum", [] { return one({3, 4}, 326); }, [](const TensorList& t) { return t[0].cumsum(1); }});
  ops.push_back({"cumprod", [] { return one({3, 4}, 327); }, [](const TensorList& t) { return cumprod(t[0], 0); }});
  ops.push_back({"cumprod(with a zero)", [] { return one({5}, 328); }, [](const TensorList& t) {
                   // The zero is a constant, so the input's gradient passes the zero-crossing paths.
                   return cumprod(t[0] * tensor({1.0, 1.0, 0.0, 1.0, 1.0}, kFloat64), 0);
                 }});
  ops.push_back({"max", [] { return one({3, 4}, 329); }, [](const TensorList& t) { return max(t[0]); }});
  ops.push_back({"max(dim)", [] { return one({3, 4}, 330); }, [](const TensorList& t) { return std::get<0>(t[0].max(1)); }});
  ops.push_back({"min", [] { return one({3, 4}, 331); }, [](const TensorList& t) { return t[0].min(); }});
  ops.push_back({"min(dim)", [] { return one({3, 4}, 332); },
                 [](const TensorList& t) { return std::get<0>(min(t[0], 0, true)); }});
  ops.push_back({"amax", [] { return one({2, 3, 4}, 333); }, [](const TensorList& t) { return amax(t[0], {0, 2}); }});
  ops.push_back({"amin", [] { return one({3, 4}, 334); }, [](const TensorList& t) { return t[0].amin({1}, true); }});
  ops.push_back({"median", [] { return one({3, 4}, 335); }, [](const TensorList& t) { return median(t[0]); }});
  ops.push_back({"median(dim)", [] { return one({3, 4}, 336); },
                 [](const TensorList& t) { return std::get<0>(t[0].median(1)); }});
  ops.push_back({"nanmedian(dim)", [] { return one({3, 5}, 337); },
                 [](const TensorList& t) { return std::get<0>(nanmedian(t[0], 0, true)); }});
}

GR_OP_INFOS(add_linalg_ops) {
  ops.push_back({"addmm", [] { return three({4}, {3, 5}, {5, 4}, 340); },
                 [](const TensorList& t) { return addmm(t[0], t[1], t[2], 0.5, 2.0); }});
  ops.push_back({"Tensor::addmm", [] { return three({3, 4}, {3, 5}, {5, 4}, 343); },
                 [](const TensorList& t) { return t[0].addmm(t[1].t().contiguous().t(), t[2]); }});
  ops.push_back({"addbmm", [] { return three({3, 4}, {2, 3, 5}, {2, 5, 4}, 346); },
                 [](const TensorList& t) { return addbmm(t[0], t[1], t[2], 1.5, -1.0); }});
  ops.push_back({"baddbmm", [] { return three({1, 3, 4}, {2, 3, 5}, {2, 5, 4}, 349); },
                 [](const TensorList& t) { return t[0].baddbmm(t[1], t[2], 2.0, 0.5); }});
  ops.push_back({"dot", [] { return TensorList{op_input({5}, 352), op_input({5}, 353)}; },
                 [](const TensorList& t) { return dot(t[0], t[1]); }});
  ops.push_back({"mv", [] { return TensorList{op_input({3, 5}, 354), op_input({5}, 355)}; },
                 [](const TensorList& t) { return t[0].mv(t[1]); }});
  ops.push_back({"outer", [] { return TensorList{op_input({3}, 356), op_input({4}, 357)}; },
                 [](const TensorList& t) { return outer(t[0], t[1]); }});
  ops.push_back({"tensordot(int)", [] { return TensorList{op_input({2, 3, 4}, 358), op_input({3, 4, 2}, 359)}; },
                 [](const TensorList& t) { return tensordot(t[0], t[1], 2); }});
  ops.push_back({"tensordot(dims)", [] { return TensorList{op_input({2, 3, 4}, 360), op_input({4, 5, 2}, 361)}; },
                 [](const TensorList& t) { return tensordot(t[0], t[1], {0, 2}, {2, 0}); }});
  ops.push_back({"einsum(matmul)", [] { return TensorList{op_input({3, 4}, 362), op_input({4, 2}, 363)}; },
                 [](const TensorList& t) { return einsum("ij,jk->ik", t); }});
  ops.push_back({"einsum(batch, ellipsis)", [] { return TensorList{op_input({2, 3, 4}, 364), op_input({2, 4, 5}, 365)}; },
                 [](const TensorList& t) { return einsum("...ij,...jk", t); }});
  ops.push_back({"einsum(trace, diagonal)", [] { return one({3, 3, 2}, 366); },
                 [](const TensorList& t) { return einsum("iij->j", t) + einsum("iij->ij", t).sum(0); }});
  ops.push_back({"einsum(three operands)",
                 [] { return TensorList{op_input({2, 3}, 367), op_input({3, 4}, 368), op_input({4}, 369)}; },
                 [](const TensorList& t) { return einsum("ab,bc,c->a", t); }});
}
