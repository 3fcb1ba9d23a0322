// Broadcasting and dimension coalescing for element-wise passes.
#include "core/native/elementwise/strided_loop.h"

namespace gr::native {

std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    GR_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b,
             " cannot be broadcast together (dimension ", i, ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

StridedLoop make_strided_loop(std::initializer_list<Tensor> operands, IntArrayRef shape) {
  StridedLoop L;
  L.noperands = static_cast<int>(operands.size());
  const int nd = static_cast<int>(shape.size());
  std::vector<int64_t> sizes = shape.vec();
  L.numel = 1;
  for (int64_t s : sizes) L.numel *= s;

  int k = 0;
  for (const Tensor& t : operands) {
    GR_CHECK(t.dim() <= nd, "internal: operand with ", t.dim(), " dims in a ", nd, "-d loop");
    auto& st = L.strides[k];
    st.assign(nd, 0);
    int lead = nd - static_cast<int>(t.dim());
    for (int d = 0; d < t.dim(); ++d) {
      int64_t sz = t.size(d);
      GR_CHECK(sz == sizes[lead + d] || sz == 1, "internal: operand shape ", t.sizes(),
               " does not broadcast to ", shape);
      st[lead + d] = sz == 1 ? 0 : t.stride(d);
    }
    L.data[k] = static_cast<char*>(t.data_ptr());
    ++k;
  }

  // Drop size-1 dims, then merge dim d into d+1 when every operand steps through them
  // as one run (stride[d] == stride[d+1] * size[d+1]).
  std::vector<int64_t> cshape;
  std::array<std::vector<int64_t>, kMaxOperands> cstr;
  for (int d = 0; d < nd; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !cshape.empty();
    for (int o = 0; o < L.noperands && merge; ++o)
      merge = cstr[o].back() == L.strides[o][d] * sizes[d];
    if (merge) {
      cshape.back() *= sizes[d];
      for (int o = 0; o < L.noperands; ++o) cstr[o].back() = L.strides[o][d];
    } else {
      cshape.push_back(sizes[d]);
      for (int o = 0; o < L.noperands; ++o) cstr[o].push_back(L.strides[o][d]);
    }
  }
  if (cshape.empty() && L.numel == 1 && nd > 0) {  // all dims were 1: one element
    cshape.push_back(1);
    for (int o = 0; o < L.noperands; ++o) cstr[o].push_back(0);
  }
  if (L.numel == 0) {
    cshape = {0};
    for (int o = 0; o < L.noperands; ++o) cstr[o] = {0};
  }
  L.shape = std::move(cshape);
  for (int o = 0; o < L.noperands; ++o) L.strides[o] = std::move(cstr[o]);
  return L;
}

}  // namespace gr::native
