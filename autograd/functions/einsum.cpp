// einsum: the equation is parsed into one label per operand dim; repeated labels become
// diagonals, labels used by one operand only are summed first, and the operands are then
// contracted left to right, each pair as one bmm of permuted, reshaped operands. Built from
// differentiable ops, so its backward comes for free.
#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <string>

#include "autograd/ops.h"
#include "core/factory.h"

namespace gr {

namespace {

// Labels: 'A'-'Z' are 0-25, 'a'-'z' 26-51 (the implicit output's order), the dims an ellipsis
// covers 52 and up, aligned to the right across operands.
constexpr int kLetters = 52;
std::string label_name(int l) {
  if (l >= kLetters) return "... dim " + std::to_string(l - kLetters);
  return std::string(1, static_cast<char>(l < 26 ? 'A' + l : 'a' + l - 26));
}

// An operand with one label per dim.
struct Term {
  Tensor t;
  std::vector<int> labels;
};

struct Equation {
  std::vector<std::vector<int>> inputs;  // labels per operand, ellipses expanded
  std::vector<int> output;
};

Equation parse(std::string_view eq, const TensorList& tensors) {
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  const size_t arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  // Split the left side into terms; a term is letters with at most one "...".
  std::vector<std::vector<int>> letters(1);
  std::vector<int> ellipsis_at(1, -1);
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ',') {
      letters.emplace_back(), ellipsis_at.push_back(-1);
    } else if (c == '.') {
      GR_CHECK(lhs.compare(i, 3, "...") == 0 && ellipsis_at.back() < 0, "einsum(): found '.' for operand ",
               letters.size() - 1, " that is not part of any ellipsis (or a second ellipsis) in \"", std::string(eq), "\"");
      ellipsis_at.back() = static_cast<int>(letters.back().size());
      i += 2;
    } else {
      GR_CHECK(std::isalpha(static_cast<unsigned char>(c)), "einsum(): invalid subscript given at index ", i,
               " in the equation string, subscripts must be in [a-zA-Z]");
      letters.back().push_back(std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : c - 'a' + 26);
    }
  }
  GR_CHECK(letters.size() <= tensors.size(), "einsum(): fewer operands were provided than specified in the equation");
  GR_CHECK(letters.size() >= tensors.size(), "einsum(): more operands were provided than specified in the equation");
  int64_t ell_dims = 0;  // the most dims any ellipsis covers
  for (size_t k = 0; k < tensors.size(); ++k) {
    GR_CHECK(tensors[k].defined(), "einsum(): operand ", k, " is undefined");
    const int64_t n = static_cast<int64_t>(letters[k].size()), nd = tensors[k].dim();
    if (ellipsis_at[k] < 0)
      GR_CHECK(n == nd, "einsum(): the number of subscripts in the equation (", n,
               ") does not match the number of dimensions (", nd, ") for operand ", k, " and no ellipsis was given");
    else
      GR_CHECK(n <= nd, "einsum(): the number of subscripts in the equation (", n,
               ") is more than the number of dimensions (", nd, ") for operand ", k);
    if (ellipsis_at[k] >= 0) ell_dims = std::max(ell_dims, nd - n);
  }
  Equation e;
  std::array<int, kLetters> count{};
  for (size_t k = 0; k < tensors.size(); ++k) {
    std::vector<int> labels = letters[k];
    for (int l : labels) ++count[l];
    if (ellipsis_at[k] >= 0) {
      const int64_t covered = tensors[k].dim() - static_cast<int64_t>(letters[k].size());
      std::vector<int> ell;
      for (int64_t i = 0; i < covered; ++i) ell.push_back(static_cast<int>(kLetters + ell_dims - covered + i));
      labels.insert(labels.begin() + ellipsis_at[k], ell.begin(), ell.end());
    }
    e.inputs.push_back(labels);
  }
  if (arrow == std::string::npos) {  // implicit: the ellipsis dims, then labels used once, in order
    for (int64_t i = 0; i < ell_dims; ++i) e.output.push_back(static_cast<int>(kLetters + i));
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) e.output.push_back(l);
    return e;
  }
  const std::string rhs = s.substr(arrow + 2);
  std::array<bool, kLetters> seen{};
  for (size_t i = 0; i < rhs.size(); ++i) {
    const char c = rhs[i];
    if (c == '.') {
      GR_CHECK(rhs.compare(i, 3, "...") == 0, "einsum(): found '.' for output that is not part of any ellipsis");
      for (int64_t j = 0; j < ell_dims; ++j) e.output.push_back(static_cast<int>(kLetters + j));
      i += 2;
      continue;
    }
    GR_CHECK(std::isalpha(static_cast<unsigned char>(c)), "einsum(): invalid subscript given at index ",
             lhs.size() + 2 + i, " in the equation string, subscripts must be in [a-zA-Z]");
    const int l = std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : c - 'a' + 26;
    GR_CHECK(!seen[l], "einsum(): output subscript ", c, " appears more than once in the output");
    GR_CHECK(count[l] > 0, "einsum(): output subscript ", c, " does not appear in the equation for any input operand");
    seen[l] = true;
    e.output.push_back(l);
  }
  return e;
}

bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

// Sums the dims whose labels `drop` says.
Term sum_labels(Term x, const std::function<bool(int)>& drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (drop(x.labels[d])) dims.push_back(static_cast<int64_t>(d));
    else kept.push_back(x.labels[d]);
  }
  if (dims.empty()) return x;
  return {sum(x.t, dims, false), kept};
}

// x permuted to `order` (labels it lacks become size-1 dims, sizes broadcast to `size`).
Tensor arrange(const Term& x, const std::vector<int>& order, const std::vector<int64_t>& size) {
  std::vector<int64_t> perm, shape;
  for (int l : order)
    for (size_t d = 0; d < x.labels.size(); ++d)
      if (x.labels[d] == l) perm.push_back(static_cast<int64_t>(d));
  Tensor p = x.t.permute(perm);
  for (int l : order) shape.push_back(contains(x.labels, l) ? size[l] : 1);
  std::vector<int64_t> kept;
  for (int l : order)
    if (contains(x.labels, l)) kept.push_back(size[l]);
  return p.expand(kept).reshape(shape);
}

// The contraction of a and b over the labels both have and `keep` does not.
Term contract(const Term& a, const Term& b, const std::function<bool(int)>& keep, const std::vector<int64_t>& size) {
  std::vector<int> batch, left, right, summed;
  for (int l : a.labels) (contains(b.labels, l) ? (keep(l) ? batch : summed) : left).push_back(l);
  for (int l : b.labels)
    if (!contains(a.labels, l)) right.push_back(l);
  auto product = [&](const std::vector<int>& ls) {
    int64_t n = 1;
    for (int l : ls) n *= size[l];
    return n;
  };
  std::vector<int64_t> out_shape;
  for (const auto* group : {&batch, &left, &right})
    for (int l : *group) out_shape.push_back(size[l]);
  std::vector<int> labels = batch;
  labels.insert(labels.end(), left.begin(), left.end());
  labels.insert(labels.end(), right.begin(), right.end());
  const int64_t B = product(batch), L = product(left), R = product(right), C = product(summed);
  Tensor out;
  if (a.t.is_floating_point() && a.t.scalar_type() == b.t.scalar_type()) {
    std::vector<int> oa = batch, ob = batch;
    oa.insert(oa.end(), left.begin(), left.end()), oa.insert(oa.end(), summed.begin(), summed.end());
    ob.insert(ob.end(), summed.begin(), summed.end()), ob.insert(ob.end(), right.begin(), right.end());
    out = bmm(arrange(a, oa, size).reshape({B, L, C}), arrange(b, ob, size).reshape({B, C, R}));
  } else {  // integers (no integer GEMM) and mixed dtypes: a broadcast product and a sum
    std::vector<int> order = labels;
    order.insert(order.end(), summed.begin(), summed.end());
    std::vector<int64_t> dims;
    for (size_t i = labels.size(); i < order.size(); ++i) dims.push_back(static_cast<int64_t>(i));
    auto broadcast = [&](const Term& x) {
      std::vector<int64_t> perm, shape;
      for (int l : order)
        for (size_t d = 0; d < x.labels.size(); ++d)
          if (x.labels[d] == l) perm.push_back(static_cast<int64_t>(d));
      for (int l : order) {
        const auto at = std::find(x.labels.begin(), x.labels.end(), l);
        shape.push_back(at == x.labels.end() ? 1 : x.t.size(at - x.labels.begin()));
      }
      return x.t.permute(perm).reshape(shape);
    };
    out = broadcast(a) * broadcast(b);
    if (!dims.empty()) out = sum(out, dims, false);
  }
  return {out.reshape(out_shape), labels};
}

}  // namespace

Tensor einsum(std::string_view equation, const TensorList& tensors, OptionalIntArrayRef path) {
  GR_CHECK(!path || path->empty(), "einsum(): a contraction path is not supported (operands contract left to right)");
  GR_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  const Equation e = parse(equation, tensors);
  // Each label's size: equal across operands, or 1 (broadcast).
  std::vector<int64_t> size(static_cast<size_t>(kLetters) + 64, 1);
  std::vector<bool> sized(size.size(), false);
  std::vector<Term> terms;
  for (size_t k = 0; k < tensors.size(); ++k) {
    Term x{tensors[k], e.inputs[k]};
    // Repeated labels within an operand: take the diagonal.
    for (size_t i = 0; i < x.labels.size(); ++i)
      for (size_t j = i + 1; j < x.labels.size(); ++j)
        if (x.labels[i] == x.labels[j]) {
          GR_CHECK(x.t.size(i) == x.t.size(j), "einsum(): subscript ", label_name(x.labels[i]),
                   " is repeated for operand ", k, " but the sizes don't match, ", x.t.size(j), " != ", x.t.size(i));
          // gr::diagonal puts the diagonal last; it goes back to dim i, j's place dropped
          const auto di = static_cast<int64_t>(i), dj = static_cast<int64_t>(j);
          x.t = gr::diagonal(x.t, 0, di, dj).movedim(-1, di);
          x.labels.erase(x.labels.begin() + j--);
        }
    for (size_t d = 0; d < x.labels.size(); ++d) {
      const int l = x.labels[d];
      GR_CHECK(l < static_cast<int>(size.size()), "einsum(): an ellipsis covers too many dims");
      const int64_t n = x.t.size(static_cast<int64_t>(d));
      GR_CHECK(!sized[l] || n == size[l] || n == 1 || size[l] == 1, "einsum(): subscript ", label_name(l), " has size ",
               n, " for operand ", k, " which does not broadcast with previously seen size ", size[l]);
      if (!sized[l] || size[l] == 1) size[l] = n;
      sized[l] = true;
    }
    terms.push_back(x);
  }
  // Labels needed after operand k: in the output or in a later operand.
  auto needed_after = [&](size_t k) {
    return [&e, k](int l) {
      if (contains(e.output, l)) return true;
      for (size_t m = k + 1; m < e.inputs.size(); ++m)
        if (contains(e.inputs[m], l)) return true;
      return false;
    };
  };
  auto used_elsewhere = [&](size_t k) {
    return [&e, k](int l) {
      if (contains(e.output, l)) return true;
      for (size_t m = 0; m < e.inputs.size(); ++m)
        if (m != k && contains(e.inputs[m], l)) return true;
      return false;
    };
  };
  for (size_t k = 0; k < terms.size(); ++k) {
    auto keep = used_elsewhere(k);
    terms[k] = sum_labels(terms[k], [&](int l) { return !keep(l); });
  }
  Term acc = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) acc = contract(acc, terms[k], needed_after(k), size);
  acc = sum_labels(acc, [&](int l) { return !contains(e.output, l); });
  // Into the output's order, broadcasting labels that stayed size 1 in every operand.
  return arrange(acc, e.output, size);
}

}  // namespace gr
