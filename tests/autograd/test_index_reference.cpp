// Shape and indexing ops against PyTorch 1.13: replays every case of
// tests/data/index_reference.json (made by make_index_reference.py) by name, comparing each
// output's shape, dtype and values (index outputs exactly, NaN where torch has NaN) and, where
// recorded, the gradients of a backward pass with torch's upstream gradient.
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "reference_util.h"

using namespace gr;
using namespace gr::indexing;
using json = nlohmann::json;

namespace {

ScalarType dtype_of(const std::string& name) {
  if (name == "int64") return kInt64;
  if (name == "bool") return kBool;
  if (name == "float32") return kFloat32;
  REQUIRE_MESSAGE(name == "float64", "unexpected dtype in the reference data: ", name);
  return kFloat64;
}

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return v.get<double>();
}

Tensor from_json(const json& j) {
  std::vector<double> values;
  for (const json& v : j.at("values")) values.push_back(number(v));
  const ScalarType dtype = dtype_of(j.at("dtype"));
  Tensor t = tensor(values, TensorOptions(kFloat64));
  if (dtype == kInt64) t = tensor(std::vector<int64_t>(values.begin(), values.end()), kInt64);
  if (dtype == kBool) t = t.ne(scalar_tensor(0.0, kFloat64));
  return t.reshape(j.at("shape").get<std::vector<int64_t>>());
}

void check_matches(const Tensor& actual, const json& expected, const std::string& what) {
  CAPTURE(what);
  REQUIRE(actual.defined());
  REQUIRE(actual.sizes().vec() == expected.at("shape").get<std::vector<int64_t>>());
  CHECK(actual.scalar_type() == dtype_of(expected.at("dtype")));
  const std::vector<double> got = gr::test::values(actual);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = number(expected.at("values")[i]);
    const bool ok = std::isnan(want) ? std::isnan(got[i])
                                     : got[i] == want || std::fabs(got[i] - want) <= 1e-12 * (1 + std::fabs(want));
    if (!ok && bad++ < 5) MESSAGE("element ", i, ": got ", got[i], ", torch has ", want);
  }
  CHECK(bad == 0);
}

// One case's inputs, by name, and its index expression.
struct Case {
  std::map<std::string, Tensor> in;
  json record;
  const Tensor& operator[](const std::string& name) const { return in.at(name); }
  std::vector<TensorIndex> index() const {
    std::vector<TensorIndex> out;
    for (const json& e : record.at("index")) {
      const std::string kind = e.at("kind");
      auto opt = [&](const char* key) { return e.at(key).is_null() ? std::optional<int64_t>() : e.at(key).get<int64_t>(); };
      if (kind == "none") out.emplace_back(None);
      else if (kind == "ellipsis") out.emplace_back("...");
      else if (kind == "bool") out.emplace_back(e.at("value").get<bool>());
      else if (kind == "int") out.emplace_back(e.at("value").get<int64_t>());
      else if (kind == "slice") out.emplace_back(Slice(opt("start"), opt("stop"), opt("step")));
      else out.emplace_back(from_json(e.at("tensor")));
    }
    return out;
  }
  // The index as at::index_put_'s list of optional tensors (used with accumulate).
  std::vector<std::optional<Tensor>> index_list() const {
    std::vector<std::optional<Tensor>> out;
    for (const TensorIndex& i : index()) out.push_back(i.is_tensor() ? std::optional<Tensor>(i.tensor()) : std::nullopt);
    return out;
  }
};

using Fn = std::function<TensorList(const Case&)>;
TensorList list(std::vector<Tensor> v) { return v; }
template <class A, class B>
TensorList pair(const std::tuple<A, B>& t) { return {std::get<0>(t), std::get<1>(t)}; }

const std::map<std::string, Fn>& ops() {
  static const std::map<std::string, Fn> table = {
      // shape
      {"view_as", [](const Case& c) { return TensorList{c["x"].view_as(c["other"])}; }},
      {"reshape_as_transposed", [](const Case& c) { return TensorList{c["x"].t().reshape_as(c["other"])}; }},
      {"broadcast_to", [](const Case& c) { return TensorList{c["x"].broadcast_to({2, 3, 4})}; }},
      {"repeat", [](const Case& c) { return TensorList{c["x"].repeat({2, 1, 3})}; }},
      {"repeat_interleave_int", [](const Case& c) { return TensorList{c["x"].repeat_interleave(2)}; }},
      {"repeat_interleave_int_dim", [](const Case& c) { return TensorList{c["x"].repeat_interleave(3, 1)}; }},
      {"repeat_interleave_tensor_dim", [](const Case& c) { return TensorList{c["x"].repeat_interleave(c["r"], 0)}; }},
      {"repeat_interleave_index", [](const Case& c) { return TensorList{repeat_interleave(c["r"])}; }},
      {"chunk_7_by_3", [](const Case& c) { return list(c["x"].chunk(3)); }},
      {"chunk_5_by_4_dim1", [](const Case& c) { return list(chunk(c["x"], 4, 1)); }},
      {"split_size", [](const Case& c) { return list(c["x"].split(2)); }},
      {"split_sizes", [](const Case& c) { return list(c["x"].split({1, 3, 2}, 1)); }},
      {"tensor_split_sections", [](const Case& c) { return list(c["x"].tensor_split(3)); }},
      {"tensor_split_indices", [](const Case& c) { return list(tensor_split(c["x"], IntArrayRef{1, 5, -1}, 1)); }},
      {"unbind_dim1", [](const Case& c) { return list(c["x"].unbind(1)); }},
      {"flip", [](const Case& c) { return TensorList{c["x"].flip({0, 2})}; }},
      {"flip_last", [](const Case& c) { return TensorList{flip(c["x"], -1)}; }},
      {"roll_dims", [](const Case& c) { return TensorList{c["x"].roll({1, -3}, {0, 2})}; }},
      {"roll_flat", [](const Case& c) { return TensorList{c["x"].roll(5)}; }},
      {"roll_big_negative", [](const Case& c) { return TensorList{roll(c["x"], -9, 1)}; }},
      {"tril", [](const Case& c) { return TensorList{c["x"].tril()}; }},
      {"tril_minus1", [](const Case& c) { return TensorList{tril(c["x"], -1)}; }},
      {"triu_1_batched", [](const Case& c) { return TensorList{c["x"].triu(1)}; }},
      {"triu_minus2", [](const Case& c) { return TensorList{triu(c["x"], -2)}; }},
      {"diag_vector", [](const Case& c) { return TensorList{diag(c["x"])}; }},
      {"diag_vector_offset", [](const Case& c) { return TensorList{diag(c["x"], 2)}; }},
      {"diag_vector_negative_offset", [](const Case& c) { return TensorList{c["x"].diag(-1)}; }},
      {"diag_matrix", [](const Case& c) { return TensorList{diag(c["x"], 1)}; }},
      {"diag_matrix_negative", [](const Case& c) { return TensorList{diag(c["x"], -2)}; }},
      {"diagonal_3d", [](const Case& c) { return TensorList{c["x"].diagonal(1, 0, 2)}; }},
      {"diagonal_negative_dims", [](const Case& c) { return TensorList{diagonal(c["x"], -1, -1, -2)}; }},
      {"diagonal_empty", [](const Case& c) { return TensorList{c["x"].diagonal(5)}; }},
      {"movedim_int", [](const Case& c) { return TensorList{c["x"].movedim(0, -1)}; }},
      {"movedim_list", [](const Case& c) { return TensorList{movedim(c["x"], {0, 3}, {2, 0})}; }},
      {"unflatten", [](const Case& c) { return TensorList{c["x"].unflatten(1, {3, -1, 2})}; }},
      {"squeeze_dims", [](const Case& c) { return TensorList{c["x"].squeeze(IntArrayRef{0, 1, 3})}; }},
      {"unsqueeze", [](const Case& c) { return TensorList{unsqueeze(c["x"], -2)}; }},
      {"meshgrid_ij", [](const Case& c) { return list(meshgrid({c["a"], c["b"], c["c"]}, "ij")); }},
      {"meshgrid_xy", [](const Case& c) { return list(meshgrid({c["a"], c["b"], c["c"]}, "xy")); }},
      {"narrow_copy", [](const Case& c) { return TensorList{c["x"].narrow_copy(1, 1, 2)}; }},
      {"stack_dim1", [](const Case& c) { return TensorList{stack({c["a"], c["b"]}, 1)}; }},
      // indexing along a dim
      {"index_select_dim0", [](const Case& c) { return TensorList{c["x"].index_select(0, c["i"])}; }},
      {"index_select_dim1", [](const Case& c) { return TensorList{index_select(c["x"], 1, c["i"])}; }},
      {"index_select_empty", [](const Case& c) { return TensorList{c["x"].index_select(0, c["i"])}; }},
      {"gather_dim1", [](const Case& c) { return TensorList{c["x"].gather(1, c["i"])}; }},
      {"gather_dim0_smaller", [](const Case& c) { return TensorList{gather(c["x"], 0, c["i"])}; }},
      {"gather_3d_last", [](const Case& c) { return TensorList{c["x"].gather(-1, c["i"])}; }},
      {"scatter_src", [](const Case& c) { return TensorList{c["x"].scatter(1, c["i"], c["src"])}; }},
      {"scatter_value", [](const Case& c) { return TensorList{scatter(c["x"], 0, c["i"], 2.5)}; }},
      {"scatter_reduce_add", [](const Case& c) { return TensorList{c["x"].scatter(1, c["i"], c["src"], "add")}; }},
      {"scatter_reduce_multiply", [](const Case& c) { return TensorList{scatter(c["x"], 1, c["i"], c["src"], "multiply")}; }},
      {"scatter_add_duplicates", [](const Case& c) { return TensorList{c["x"].scatter_add(0, c["i"], c["src"])}; }},
      {"scatter_add_dim1", [](const Case& c) { return TensorList{scatter_add(c["x"], 1, c["i"], c["src"])}; }},
      {"index_add_alpha", [](const Case& c) { return TensorList{c["x"].index_add(0, c["i"], c["src"], -1.5)}; }},
      {"index_add_dim1", [](const Case& c) { return TensorList{index_add(c["x"], 1, c["i"], c["src"])}; }},
      {"index_copy", [](const Case& c) { return TensorList{c["x"].index_copy(0, c["i"], c["src"])}; }},
      {"index_fill_negative", [](const Case& c) { return TensorList{c["x"].index_fill(1, c["i"], -2.0)}; }},
      {"index_fill_tensor_value", [](const Case& c) { return TensorList{index_fill(c["x"], 0, c["i"], c["v"])}; }},
      // masks and selection
      {"masked_fill_broadcast", [](const Case& c) { return TensorList{c["x"].masked_fill(c["m"], -1e9)}; }},
      {"masked_fill_inf", [](const Case& c) { return TensorList{masked_fill(c["x"], c["m"], -INFINITY)}; }},
      {"masked_fill_mask_bigger", [](const Case& c) { return TensorList{c["x"].masked_fill(c["m"], 3.0)}; }},
      {"masked_fill_tensor_value", [](const Case& c) { return TensorList{c["x"].masked_fill(c["m"], c["v"])}; }},
      {"masked_fill_int", [](const Case& c) { return TensorList{c["x"].masked_fill(c["m"], 7)}; }},
      {"masked_select_broadcast", [](const Case& c) { return TensorList{c["x"].masked_select(c["m"])}; }},
      {"masked_scatter", [](const Case& c) { return TensorList{masked_scatter(c["x"], c["m"], c["src"])}; }},
      {"where_tensors", [](const Case& c) { return TensorList{where(c["c"], c["a"], c["b"])}; }},
      {"where_scalar_tensor", [](const Case& c) { return TensorList{where(c["c"], 2.5, c["b"])}; }},
      {"where_tensor_scalar", [](const Case& c) { return TensorList{c["a"].where(c["c"], -1.0)}; }},
      {"where_scalars_float", [](const Case& c) { return TensorList{where(c["c"], 1.5, 0)}; }},
      {"where_scalars_int", [](const Case& c) { return TensorList{where(c["c"], 3, -4)}; }},
      {"where_int_tensor_float_scalar", [](const Case& c) { return TensorList{where(c["c"], c["a"], 0.5)}; }},
      {"where_condition", [](const Case& c) { return list(where(c["c"])); }},
      {"nonzero", [](const Case& c) { return TensorList{c["x"].nonzero()}; }},
      {"nonzero_3d", [](const Case& c) { return TensorList{nonzero(c["x"])}; }},
      {"nonzero_empty", [](const Case& c) { return TensorList{c["x"].nonzero()}; }},
      {"argwhere", [](const Case& c) { return TensorList{argwhere(c["x"])}; }},
      // sorting
      {"sort_stable_ties", [](const Case& c) { return pair(sort(c["x"], std::optional<bool>(true))); }},
      {"sort_stable_ties_descending", [](const Case& c) { return pair(c["x"].sort(std::optional<bool>(true), 1, true)); }},
      {"sort_unstable_ties", [](const Case& c) { return pair(c["x"].sort()); }},
      {"sort_unstable_ties_descending", [](const Case& c) { return pair(sort(c["x"], -1, true)); }},
      {"sort_dim0", [](const Case& c) { return pair(c["x"].sort(0)); }},
      {"sort_long_ties", [](const Case& c) { return pair(sort(c["x"], std::optional<bool>(true))); }},
      {"argsort_descending", [](const Case& c) { return TensorList{c["x"].argsort(int64_t{1}, true)}; }},
      {"argsort_ties", [](const Case& c) { return TensorList{argsort(c["x"])}; }},
      {"topk_largest", [](const Case& c) { return pair(c["x"].topk(3)); }},
      {"topk_smallest_dim0", [](const Case& c) { return pair(topk(c["x"], 2, 0, false)); }},
      {"topk_ties_nth_element", [](const Case& c) { return pair(c["x"].topk(7)); }},
      {"topk_ties_partial_sort", [](const Case& c) { return pair(topk(c["x"], 4)); }},
      {"topk_ties_smallest", [](const Case& c) { return pair(c["x"].topk(9, -1, false)); }},
      {"topk_unsorted", [](const Case& c) { return pair(c["x"].topk(6, -1, true, false)); }},
      {"topk_k0", [](const Case& c) { return pair(c["x"].topk(0)); }},
      {"one_hot_infer", [](const Case& c) { return TensorList{one_hot(c["x"])}; }},
      {"one_hot_classes", [](const Case& c) { return TensorList{one_hot(c["x"], 4)}; }},
  };
  return table;
}

// Cases with an index expression: x.index(...), or x.clone() with index_put_ applied.
TensorList run_indexed(const Case& c) {
  if (!c.in.count("value")) return {c["x"].index(c.index())};
  Tensor y = c["x"].clone();
  if (c.record.contains("accumulate")) y.index_put_(c.index_list(), c["value"], c.record["accumulate"].get<bool>());
  else y.index_put_(c.index(), c["value"]);
  return {y};
}

}  // namespace

TEST_CASE("shape and indexing ops match PyTorch (index_reference.json)") {
  const json data = gr::test::load_reference("index_reference.json");
  std::set<std::string> seen;
  for (const json& record : data.at("cases")) {
    const std::string name = record.at("name");
    CAPTURE(name);
    seen.insert(name);
    const bool indexed = record.contains("index");
    REQUIRE_MESSAGE((indexed || ops().count(name)), "no replay for reference case ", name);
    Case c{{}, record};
    std::set<std::string> grads;
    if (record.contains("grads"))
      for (auto& [k, v] : record.at("grads").items()) grads.insert(k);
    for (auto& [k, v] : record.at("inputs").items()) {
      Tensor t = from_json(v);
      c.in[k] = grads.count(k) ? t.requires_grad_(true) : t;
    }
    TensorList outs = indexed ? run_indexed(c) : ops().at(name)(c);
    REQUIRE(outs.size() == record.at("outputs").size());
    for (size_t i = 0; i < outs.size(); ++i) check_matches(outs[i], record.at("outputs")[i], "output " + std::to_string(i));
    if (!grads.empty()) {
      outs[0].backward(from_json(record.at("upstream")));
      for (const std::string& k : grads) check_matches(c[k].grad(), record.at("grads").at(k), "gradient of " + k);
    }
  }
  for (const auto& [name, fn] : ops()) CHECK_MESSAGE(seen.count(name), "replay ", name, " has no reference case");
}
