// Every spelling the op lists declare (Note [Op lists]) is defined: the address of each gr::
// function and Tensor method, with its exact type, is taken here, so a spelling declared by a
// list and defined nowhere fails this suite's link (the audit, test_libtorch_spellings.cpp,
// checks the other way: that libtorch's spellings are in the lists).
#include <doctest/doctest.h>
#include <gradring/gradring.h>

namespace gr {
namespace {

size_t count_list_spellings() {
  size_t n = 0;
  auto use = [&n](auto fn) { n += fn != nullptr; };
#undef GR_D
#define GR_D(...)
// (ret is never handed on to another macro: a GR_TYPE(std::tuple<A, B>) would split there.)
#define GR_OP(ret, name, params, args)                        \
  use(static_cast<ret(*) GR_WITH_SELF params>(&gr::name));   \
  use(static_cast<ret (Tensor::*) params const>(&Tensor::name));
#define GR_OP_BY_METHOD(ret, name, params, args)              \
  use(static_cast<ret(*) GR_WITH_SELF params>(&gr::name));   \
  use(static_cast<ret (Tensor::*) params const>(&Tensor::name));
#define GR_OP_FN(ret, name, params) use(static_cast<ret(*) params>(&gr::name));
#define GR_OP_METHOD(ret, name, params) use(static_cast<ret (Tensor::*) params const>(&Tensor::name));
#define GR_OP_INPLACE(name, params, args)                               \
  use(static_cast<Tensor& (*)GR_WITH_MUTABLE_SELF params>(&gr::name)); \
  use(static_cast<Tensor& (Tensor::*) params const>(&Tensor::name));
#define GR_OP_INPLACE_METHOD(name, params) use(static_cast<Tensor& (Tensor::*) params const>(&Tensor::name));
#define GR_OP_INPLACE_OF(name, variants, params, args)                                   \
  GR_IF_METHOD(variants, use(static_cast<Tensor& (Tensor::*) params const>(&Tensor::name##_));) \
  GR_IF_FN(variants, use(static_cast<Tensor& (*)GR_WITH_MUTABLE_SELF params>(&gr::name##_));)
#include <gradring/core/native/all_ops.def>
#undef GR_OP
#undef GR_OP_BY_METHOD
#undef GR_OP_FN
#undef GR_OP_METHOD
#undef GR_OP_INPLACE
#undef GR_OP_INPLACE_METHOD
#undef GR_OP_INPLACE_OF
#undef GR_D
#define GR_D(...) = __VA_ARGS__
  return n;
}

}  // namespace
}  // namespace gr

TEST_CASE("every spelling of the op lists is defined (this suite links) and the lists are read whole") {
  // About 700 today: far fewer means a list stopped being read (a form left undefined reads as
  // nothing).
  CHECK(gr::count_list_spellings() > 600);
}
