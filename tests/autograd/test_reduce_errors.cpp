// The errors of the reductions and linear algebra: each names the op and the shapes or dtypes
// at fault, as PyTorch's messages do.
#include <source_location>

#include "test_util.h"

using namespace gr;

namespace {
// The call throws gr::Error whose message contains every part.
template <class F>
void check_error(F f, std::initializer_list<const char*> parts,
                 std::source_location at = std::source_location::current()) {
  INFO("the call on line ", at.line());
  try {
    f();
    FAIL("no error");
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* p : parts) {
      INFO("message: ", m, "; expected to contain: ", p);
      CHECK(m.find(p) != std::string::npos);
    }
  }
}
}  // namespace

TEST_CASE("reduction errors name the op, the dims, shapes and dtypes") {
  const Tensor x = zeros({2, 3});
  check_error([&] { sum(x, {0, 0}); }, {"sum", "dim 0", "more than once"});
  check_error([&] { x.mean({2}); }, {"mean", "2"});
  check_error([&] { mean(ones({3}, kInt64)); }, {"mean", "int64"});
  check_error([&] { var(ones({3}, kInt64)); }, {"var", "int64"});
  check_error([&] { x.norm(2, {5}); }, {"norm", "5"});
  check_error([&] { norm(ones({3}, kInt64)); }, {"norm", "floating point", "int64"});
  check_error([&] { norm(x, "nuc"); }, {"norm", "nuc"});
  check_error([&] { linalg::vector_norm(x, 2, std::nullopt, false, kInt64); }, {"linalg.vector_norm", "dtype"});
  check_error([&] { linalg::vector_norm(zeros({2, 0}), INFINITY, 1); }, {"linalg.vector_norm", "inf norm"});
  check_error([&] { linalg::matrix_norm(zeros({3})); }, {"linalg.matrix_norm", "at least 2 dimensions", "[3]"});
  check_error([&] { linalg::matrix_norm(x, 2); }, {"linalg.matrix_norm", "ord = 2"});
  check_error([&] { linalg::matrix_norm(x, "nuc"); }, {"linalg.matrix_norm", "nuc"});
  check_error([&] { linalg::matrix_norm(x, "fro", {0, 0}); }, {"linalg.matrix_norm"});
  check_error([&] { zeros({2, 0}).max(1); }, {"max", "non-zero size", "[2, 0]"});
  check_error([&] { amin(zeros({0, 3}), {0}); }, {"amin", "[0, 3]"});
  check_error([&] { zeros({0}).argmin(); }, {"argmin"});
  check_error([&] { x.cumsum(2); }, {"cumsum", "2"});
  check_error([&] { logsumexp(x, {3}); }, {"logsumexp", "3"});
  check_error([&] { sum(Tensor()); }, {"sum", "undefined"});
}

TEST_CASE("linear algebra errors name the op, the shapes and dtypes") {
  check_error([&] { addmm(zeros({2, 2}), zeros({2, 3}), zeros({4, 2})); }, {"addmm", "2x3", "4x2"});
  check_error([&] { addmm(zeros({3}), zeros({2, 3}), zeros({3, 2})); }, {"addmm", "[3]", "[2, 2]"});
  check_error([&] { addmm(zeros({2}), zeros({2, 3, 1}), zeros({3, 2})); }, {"addmm", "matrices", "3-D"});
  check_error([&] { baddbmm(zeros({1}), zeros({2, 3, 4}), zeros({3, 4, 5})); }, {"baddbmm", "[2, 3, 4]", "[3, 4, 5]"});
  check_error([&] { addbmm(zeros({3, 5}), zeros({3, 4}), zeros({2, 4, 5})); }, {"addbmm", "3-D"});
  check_error([&] { dot(zeros({3}), zeros({4})); }, {"dot", "[3]", "[4]"});
  check_error([&] { dot(zeros({3}), zeros({3}, kFloat64)); }, {"dot", "float32", "float64"});
  check_error([&] { dot(zeros({3, 1}), zeros({3})); }, {"dot", "1D"});
  check_error([&] { mv(zeros({2, 3}), zeros({4})); }, {"mv", "2x3", "4"});
  check_error([&] { outer(zeros({2, 3}), zeros({4})); }, {"outer", "[2, 3]", "[4]"});
  check_error([&] { tensordot(zeros({2, 3}), zeros({4, 2}), {1}, {0}); }, {"tensordot", "3", "4"});
  check_error([&] { tensordot(zeros({2, 3}), zeros({3, 2}), {1}, {0, 1}); }, {"tensordot", "same length"});
  check_error([&] { tensordot(zeros({2}), zeros({2}), 3); }, {"tensordot", "dims"});
  check_error([&] { einsum("ij,jk->ik", {zeros({2, 3}), zeros({4, 5})}); }, {"einsum", "j", "4", "3"});
  check_error([&] { einsum("ij,jk", {zeros({2, 3})}); }, {"einsum", "fewer operands"});
  check_error([&] { einsum("ij", {zeros({2, 3}), zeros({3})}); }, {"einsum", "more operands"});
  check_error([&] { einsum("ijk", {zeros({2, 3})}); }, {"einsum", "number of subscripts"});
  check_error([&] { einsum("ii", {zeros({2, 3})}); }, {"einsum", "repeated", "3", "2"});
  check_error([&] { einsum("ij->ii", {zeros({2, 3})}); }, {"einsum", "more than once"});
  check_error([&] { einsum("ij->k", {zeros({2, 3})}); }, {"einsum", "k", "does not appear"});
  check_error([&] { einsum("i1", {zeros({2, 3})}); }, {"einsum", "invalid subscript"});
  check_error([&] { einsum("ij", {zeros({2, 3})}, IntArrayRef{0}); }, {"einsum", "path"});
}
