// OpInfo entries of the shape and indexing ops (issue 15): every differentiable op and
// overload, gradchecked in float64 by test_op_info.cpp. Index tensors live in the closures.
#include "op_info.h"

using namespace gr;
using namespace gr::indexing;
using gr::testing::op_input;
using gr::testing::OpInfo;

namespace {
Tensor longs(std::vector<int64_t> v, std::vector<int64_t> shape) { return tensor(v, kInt64).reshape(shape); }
Tensor mask(std::vector<int64_t> v, std::vector<int64_t> shape) { return longs(v, shape).ne(0); }
TensorList one(std::vector<int64_t> shape, uint64_t seed) { return {op_input(shape, seed)}; }
}  // namespace

GR_OP_INFOS(add_shape_ops) {
  ops.push_back({"Tensor::view_as", [] { return one({2, 6}, 1); }, [](const TensorList& t) { return t[0].view_as(zeros({3, 4})); }});
  ops.push_back({"Tensor::reshape_as", [] { return one({3, 4}, 2); },
                 [](const TensorList& t) { return t[0].t().reshape_as(zeros({2, 6})); }});
  ops.push_back({"broadcast_to", [] { return one({3, 1}, 3); }, [](const TensorList& t) { return broadcast_to(t[0], {2, 3, 4}); }});
  ops.push_back({"broadcast_tensors", [] { return TensorList{op_input({3, 1}, 4), op_input({4}, 5)}; },
                 [](const TensorList& t) { auto b = broadcast_tensors(t); return b[0] * b[1]; }});
  ops.push_back({"Tensor::repeat", [] { return one({2, 3}, 6); }, [](const TensorList& t) { return t[0].repeat({2, 1, 3}); }});
  ops.push_back({"repeat_interleave(int)", [] { return one({2, 3}, 7); },
                 [](const TensorList& t) { return repeat_interleave(t[0], 2, 1); }});
  ops.push_back({"repeat_interleave(tensor)", [] { return one({3, 2}, 8); },
                 [](const TensorList& t) { return t[0].repeat_interleave(longs({1, 0, 3}, {3}), 0); }});
  ops.push_back({"chunk", [] { return one({7, 2}, 9); }, [](const TensorList& t) { return t[0].chunk(3)[2] * 2; }});
  ops.push_back({"split", [] { return one({5, 3}, 10); }, [](const TensorList& t) { return split(t[0], 2)[1]; }});
  ops.push_back({"split_with_sizes", [] { return one({2, 6}, 11); },
                 [](const TensorList& t) { auto p = t[0].split({1, 3, 2}, 1); return p[1].sum(IntArrayRef{1}) + p[2].sum(IntArrayRef{1}); }});
  ops.push_back({"tensor_split", [] { return one({2, 7}, 12); }, [](const TensorList& t) { return tensor_split(t[0], 3, 1)[0]; }});
  ops.push_back({"unbind", [] { return one({2, 3, 4}, 13); }, [](const TensorList& t) { auto u = t[0].unbind(1); return u[0] * u[2]; }});
  ops.push_back({"flip", [] { return one({2, 3, 4}, 14); }, [](const TensorList& t) { return t[0].flip({0, 2}); }});
  ops.push_back({"roll", [] { return one({3, 4}, 15); }, [](const TensorList& t) { return roll(t[0], {1, -5}, {0, 1}); }});
  ops.push_back({"roll(flattened)", [] { return one({3, 4}, 16); }, [](const TensorList& t) { return t[0].roll(5); }});
  ops.push_back({"tril", [] { return one({2, 4, 5}, 17); }, [](const TensorList& t) { return tril(t[0], -1); }});
  ops.push_back({"triu", [] { return one({4, 3}, 18); }, [](const TensorList& t) { return t[0].triu(1); }});
  ops.push_back({"Tensor::tril_", [] { return one({3, 3}, 19); }, [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   y.tril_(0);
                   return y;
                 }});
  ops.push_back({"diag(vector)", [] { return one({3}, 20); }, [](const TensorList& t) { return diag(t[0], -1); }});
  ops.push_back({"diag(matrix)", [] { return one({3, 4}, 21); }, [](const TensorList& t) { return t[0].diag(1); }});
  ops.push_back({"diagonal", [] { return one({2, 3, 4}, 22); }, [](const TensorList& t) { return diagonal(t[0], 1, 0, 2); }});
  ops.push_back({"movedim", [] { return one({2, 3, 4}, 23); }, [](const TensorList& t) { return t[0].movedim({0, 1}, {2, 0}); }});
  ops.push_back({"unflatten", [] { return one({2, 6}, 24); }, [](const TensorList& t) { return t[0].unflatten(1, {3, -1}); }});
  ops.push_back({"squeeze(dims)", [] { return one({1, 3, 1}, 25); }, [](const TensorList& t) { return squeeze(t[0], {0, 2}); }});
  ops.push_back({"meshgrid", [] { return TensorList{op_input({2}, 26), op_input({3}, 27)}; },
                 [](const TensorList& t) { auto g = meshgrid(t, "xy"); return g[0] * g[1]; }});
  ops.push_back({"narrow_copy", [] { return one({3, 4}, 28); }, [](const TensorList& t) { return narrow_copy(t[0], 1, 1, 2); }});
  ops.push_back({"stack", [] { return TensorList{op_input({2, 3}, 29), op_input({2, 3}, 30)}; },
                 [](const TensorList& t) { return stack(t, 1); }});
}

GR_OP_INFOS(add_index_ops) {
  ops.push_back({"index_select", [] { return one({5, 3}, 40); },
                 [](const TensorList& t) { return t[0].index_select(0, longs({4, 0, 0, 2}, {4})); }});
  ops.push_back({"gather", [] { return one({3, 5}, 41); },
                 [](const TensorList& t) { return gather(t[0], 1, longs({0, 4, 2, 2, 1, 3}, {3, 2})); }});
  ops.push_back({"scatter(src)", [] { return TensorList{op_input({3, 5}, 42), op_input({3, 2}, 43)}; },
                 [](const TensorList& t) { return t[0].scatter(1, longs({0, 4, 2, 1, 3, 0}, {3, 2}), t[1]); }});
  ops.push_back({"scatter(src larger than index)", [] { return TensorList{op_input({3, 5}, 44), op_input({3, 3}, 45)}; },
                 [](const TensorList& t) { return scatter(t[0], 1, longs({0, 4, 2, 1}, {2, 2}), t[1]); }});
  ops.push_back({"scatter(value)", [] { return one({4, 3}, 46); },
                 [](const TensorList& t) { return t[0].scatter(0, longs({1, 0, 3}, {1, 3}), 2.5); }});
  ops.push_back({"scatter(reduce add)", [] { return TensorList{op_input({3, 4}, 47), op_input({1, 3}, 48)}; },
                 [](const TensorList& t) { return scatter(t[0], 1, longs({1, 1, 3}, {1, 3}), t[1], "add"); }});
  ops.push_back({"scatter_add", [] { return TensorList{op_input({3, 4}, 49), op_input({2, 4}, 50)}; },
                 [](const TensorList& t) { return t[0].scatter_add(0, longs({2, 2, 0, 2, 1, 1, 1, 0}, {2, 4}), t[1]); }});
  ops.push_back({"Tensor::scatter_add_", [] { return TensorList{op_input({3, 4}, 51), op_input({2, 4}, 52)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   y.scatter_add_(0, longs({2, 2, 0, 2, 1, 1, 1, 0}, {2, 4}), t[1]);
                   return y;
                 }});
  ops.push_back({"index_add", [] { return TensorList{op_input({5, 3}, 53), op_input({3, 3}, 54)}; },
                 [](const TensorList& t) { return index_add(t[0], 0, longs({0, 4, 0}, {3}), t[1], -1.5); }});
  ops.push_back({"index_copy", [] { return TensorList{op_input({4, 3}, 55), op_input({2, 3}, 56)}; },
                 [](const TensorList& t) { return t[0].index_copy(0, longs({3, 0}, {2}), t[1]); }});
  ops.push_back({"index_fill(value)", [] { return one({3, 4}, 57); },
                 [](const TensorList& t) { return t[0].index_fill(1, longs({-1, 0}, {2}), -2.0); }});
  ops.push_back({"index_fill(tensor)", [] { return TensorList{op_input({3, 4}, 58), op_input({}, 59)}; },
                 [](const TensorList& t) { return index_fill(t[0], 0, longs({2, 2}, {2}), t[1]); }});
  ops.push_back({"masked_fill", [] { return one({4}, 60); },
                 [](const TensorList& t) { return t[0].masked_fill(mask({1, 0, 0, 1, 1, 1, 0, 0}, {2, 4}), 3.0); }});
  ops.push_back({"masked_fill(tensor)", [] { return TensorList{op_input({2, 4}, 61), op_input({}, 62)}; },
                 [](const TensorList& t) { return masked_fill(t[0], mask({1, 0, 0, 1}, {4}), t[1]); }});
  ops.push_back({"Tensor::masked_fill_", [] { return TensorList{op_input({2, 4}, 63), op_input({}, 64)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   y.masked_fill_(mask({1, 0, 0, 1}, {4}), t[1]);
                   return y;
                 }});
  ops.push_back({"masked_select", [] { return one({2, 1, 4}, 65); },
                 [](const TensorList& t) { return t[0].masked_select(mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4})); }});
  ops.push_back({"masked_scatter", [] { return TensorList{op_input({3, 4}, 66), op_input({9}, 67)}; },
                 [](const TensorList& t) { return masked_scatter(t[0], mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4}), t[1]); }});
  ops.push_back({"where(scalar, tensor)", [] { return one({3, 4}, 68); },
                 [](const TensorList& t) { return where(mask({1, 0, 1, 0}, {4}), 2.5, t[0]); }});
  ops.push_back({"sort", [] { return one({3, 5}, 69); }, [](const TensorList& t) { return std::get<0>(t[0].sort(0, true)); }});
  ops.push_back({"topk", [] { return one({3, 6}, 70); }, [](const TensorList& t) { return std::get<0>(topk(t[0], 2, -1, false)); }});
}

GR_OP_INFOS(add_advanced_index_ops) {
  ops.push_back({"index", [] { return one({3, 4, 5}, 80); }, [](const TensorList& t) {
                   return index(t[0], {longs({0, 2}, {2}), std::nullopt, longs({4, -1}, {2})});
                 }});
  ops.push_back({"index(mask)", [] { return one({3, 4}, 81); },
                 [](const TensorList& t) { return t[0].index({mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1}, {3, 4})}); }});
  ops.push_back({"index_put(accumulate)", [] { return TensorList{op_input({4, 5}, 82), op_input({4}, 83)}; },
                 [](const TensorList& t) {
                   return index_put(t[0], {longs({1, 1, 3, 1}, {4}), longs({0, 0, 4, 2}, {4})}, t[1], true);
                 }});
  ops.push_back({"index_put", [] { return TensorList{op_input({4, 5}, 84), op_input({2, 5}, 85)}; },
                 [](const TensorList& t) { return t[0].index_put({longs({3, 0}, {2})}, t[1]); }});
  ops.push_back({"index_put_", [] { return TensorList{op_input({3, 4, 5}, 86), op_input({2, 4}, 87)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   index_put_(y, {longs({0, 2}, {2}), std::nullopt, longs({4, 1}, {2})}, t[1]);
                   return y;
                 }});
  ops.push_back({"Tensor::index(TensorIndex)", [] { return one({3, 4, 5}, 88); },
                 [](const TensorList& t) { return t[0].index({Slice(None, 2), None, "...", longs({3, 0, 3}, {3})}); }});
  ops.push_back({"Tensor::index_put_(TensorIndex)", [] { return TensorList{op_input({4, 5}, 89), op_input({1, 5}, 90)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   y.index_put_({Slice(1, None, 2)}, t[1]);
                   return y;
                 }});
  ops.push_back({"Tensor::index_put_(TensorIndex, tensors)", [] { return TensorList{op_input({4, 5}, 91), op_input({3}, 92)}; },
                 [](const TensorList& t) {
                   Tensor y = t[0] * 1;
                   y.index_put_({longs({0, 3, 2}, {3}), Slice(1, 2)}, t[1].unsqueeze(1));
                   return y;
                 }});
}
