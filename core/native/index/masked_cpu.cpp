// CPU kernels of the masks' compactions (contracts in index_ops.h): nonzero, masked_select and
// masked_scatter, each one pass without a branch per element (Note [Compaction without branches]).
#include <algorithm>
#include <utility>

#include "core/factory.h"
#include "core/index_functors.h"
#include "core/native/elementwise/bool_bytes.h"
#include "core/native/copy/copy.h"
#include "core/native/index/index_ops.h"

namespace gr::native {
namespace {

namespace F = gr::functors;

// Note [Compaction without branches]
// nonzero, masked_select and masked_scatter walk a mask whose set elements go to (or come
// from) consecutive slots k. `if (set) out[k++] = x` mispredicts about every other element of
// a random mask; instead every element is stored at slot k (or reads slot k) and k advances by
// (set ? 1 : 0). The walk stops at the last set element, so no store passes the end of the
// result and no read passes the source's count-th element. The count comes first, in its own
// pass, which vectorises (bools are read as bytes: See Note [Bools read as bytes]).

// (the number of i in [0, n) with set(i), the last such i or -1)
template <class P>
std::pair<int64_t, int64_t> count_and_last(int64_t n, const P& set) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += set(i) ? 1 : 0;
  int64_t last = n - 1;
  while (last >= 0 && !set(last)) --last;
  return {count, last};
}

// Row-major coordinates of [0, last] into o (nd of them per slot), slot k advancing when set(i).
// ND is nd when known at compile time (1, 2), else 0.
template <int ND, class P>
void write_coordinates(int64_t* o, int64_t last, IntArrayRef sizes, const P& set) {
  const int64_t nd = ND ? ND : static_cast<int64_t>(sizes.size()), cols = sizes[nd - 1];
  std::vector<int64_t> lead(nd, 0);  // the coordinates of the current row, but the last
  int64_t k = 0;
  for (int64_t base = 0; base <= last; base += cols) {
    const int64_t end = std::min(cols, last - base + 1);
    if constexpr (ND == 1) {
      for (int64_t c = 0; c < end; ++c) o[k] = c, k += set(base + c) ? 1 : 0;
    } else if constexpr (ND == 2) {
      const int64_t r = lead[0];
      for (int64_t c = 0; c < end; ++c) {
        o[2 * k] = r, o[2 * k + 1] = c;
        k += set(base + c) ? 1 : 0;
      }
    } else {
      for (int64_t c = 0; c < end; ++c) {
        int64_t* d = o + k * nd;
        std::copy(lead.begin(), lead.end() - 1, d);
        d[nd - 1] = c;
        k += set(base + c) ? 1 : 0;
      }
    }
    for (int64_t d = nd - 2; d >= 0 && ++lead[d] == sizes[d]; --d) lead[d] = 0;
  }
}

Tensor nonzero_cpu(const Tensor& self) {
  Tensor x = contiguous(self);
  const int64_t numel = x.numel(), nd = x.dim();
  return dispatch_all(x.scalar_type(), "nonzero", [&]<class T>() {
    const void* v = x.data_ptr<T>();
    const auto set = [v](int64_t i) { return F::is_nonzero(load_stored<T>(v, i)); };
    const auto [count, last] = count_and_last(numel, set);
    Tensor out = empty({count, nd}, TensorOptions(kInt64));
    if (count == 0 || nd == 0) return out;
    int64_t* o = out.data_ptr<int64_t>();
    if (nd == 1) write_coordinates<1>(o, last, x.sizes(), set);
    else if (nd == 2) write_coordinates<2>(o, last, x.sizes(), set);
    else write_coordinates<0>(o, last, x.sizes(), set);
    return out;
  });
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) {
  const uint8_t* m = reinterpret_cast<const uint8_t*>(mask.data_ptr<bool>());
  const auto [count, last] = count_and_last(mask.numel(), [m](int64_t i) { return m[i] != 0; });
  Tensor out = empty({count}, self.options());
  dispatch_all(self.scalar_type(), "masked_select", [&]<class T>() {
    const T* v = self.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int64_t k = 0;
    for (int64_t i = 0; i <= last; ++i) o[k] = v[i], k += m[i] != 0 ? 1 : 0;
  });
  return out;
}

int64_t masked_scatter_cpu(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const uint8_t* m = reinterpret_cast<const uint8_t*>(mask.data_ptr<bool>());
  const auto [count, last] = count_and_last(mask.numel(), [m](int64_t i) { return m[i] != 0; });
  if (count > source.numel()) return count;  // the caller reports it
  dispatch_all(self.scalar_type(), "masked_scatter", [&]<class T>() {
    const T* s = source.data_ptr<T>();
    T* o = self.data_ptr<T>();
    int64_t k = 0;
    for (int64_t i = 0; i <= last; ++i) {
      // Picked by index: GCC turns `o[i] = set ? s[k] : o[i]` (and a pointer select) into
      // a branch around the store.
      const int set = m[i] != 0 ? 1 : 0;
      const T pick[2] = {o[i], s[k]};
      o[i] = pick[set];
      k += set;
    }
  });
  return count;
}

}  // namespace

GR_REGISTER_KERNEL(nonzero_stub, kCPU, &nonzero_cpu);
GR_REGISTER_KERNEL(masked_select_stub, kCPU, &masked_select_cpu);
GR_REGISTER_KERNEL(masked_scatter_stub, kCPU, &masked_scatter_cpu);

}  // namespace gr::native
