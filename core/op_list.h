// How an op family's declaration list (a .def file beside the family's kernels) is read: the
// entry forms, and the helpers the files that include a list use. See Note [Op lists].
#pragma once

#include <tuple>

// Note [Op lists]
// Every op is declared once, in its family's list (core/native/*/ *_ops.def): an X-macro file
// whose lines are read several times with different meanings. core/tensor.h reads every list
// inside class Tensor (the methods), autograd/ops.h reads them as gr:: functions,
// autograd/tensor_methods.cpp defines from them the spellings that forward to another one, and
// the kernels, the tests and scripts/spelling_audit.py read the lists of their own family. A
// list line is one of:
//
//   GR_OP(ret, name, (params), (args))     gr::name(const Tensor& self, params) and self.name(params);
//                                          the function is the op, the method forwards to it
//   GR_OP_BY_METHOD(ret, name, (params), (args))  the same two, the method being the op
//   GR_OP_FN(ret, name, (params))          the function gr::name(params) only
//   GR_OP_METHOD(ret, name, (params))      the method self.name(params) only, defined by the op
//   GR_OP_INPLACE(name, (params), (args))  Tensor& self.name(params) const, the op, and
//                                          Tensor& gr::name(Tensor& self, params) forwarding to it
//   GR_OP_INPLACE_METHOD(name, (params))   the in-place method only
//   GR_OP_INPLACE_OF(name, fn|method|fn_method, (params), (args))
//                                          name_ in place as a copy of the op name's result
//                                          (x.addmm_(a, b) is x.copy_(addmm(x, a, b)); Note
//                                          [In place through a copy] in autograd/tensor_methods.cpp)
//
// or a family's own form (GR_UNARY_OP, GR_BINARY_OP, ... in the element-wise lists), which
// says more (functor, dtypes, autograd node) and reads as the forms above where only the
// spellings matter. params are written once with their defaults as GR_D(value), which reads
// `= value` in declarations and nothing in definitions; args name the params for forwarding.
// A return type with a comma is written GR_TYPE(std::tuple<Tensor, Tensor>).
//
// Where each spelling is defined (Note [Tensor methods]): the op (GR_OP's and GR_OP_FN's
// function, the methods of the other forms) in the op's file (autograd/functions/, a few in
// core/); the spelling that forwards (GR_OP's method, GR_OP_BY_METHOD's and GR_OP_INPLACE's
// function, both of GR_OP_INPLACE_OF) in autograd/tensor_methods.cpp, from the lists.
//
// A file that reads a list defines the forms it needs, includes the list, and undefines them;
// a list gives every form the reader left undefined an empty meaning (core/op_list_begin.h,
// core/op_list_end.h), and each family form a meaning in terms of the generic ones.

// Default arguments in a list: `= value` unless a reader that defines functions undefines it.
#define GR_D(...) = __VA_ARGS__
// A type with commas, as one macro argument.
#define GR_TYPE(...) __VA_ARGS__
// (params) -> (const Tensor& self, params), and the same for an in-place op's self.
#define GR_WITH_SELF(...) (const ::gr::Tensor& self __VA_OPT__(, ) __VA_ARGS__)
#define GR_WITH_MUTABLE_SELF(...) (::gr::Tensor & self __VA_OPT__(, ) __VA_ARGS__)
// (args) -> (*this, args), and (self, args) for a function forwarding to a method.
#define GR_WITH_THIS(...) (*this __VA_OPT__(, ) __VA_ARGS__)
#define GR_ARGS(...) (__VA_ARGS__)
// An in-place line whose function form exists or not: GR_OP_INPLACE_AS(fn|method, name, (params), (args)).
#define GR_OP_INPLACE_AS(variants, name, params, args) GR_OP_INPLACE_AS_##variants(name, params, args)
#define GR_OP_INPLACE_AS_fn(name, params, args) GR_OP_INPLACE(name, params, args)
#define GR_OP_INPLACE_AS_method(name, params, args) GR_OP_INPLACE_METHOD(name, params)
// x when a line's variants (fn, method or fn_method) have a method, or a function.
#define GR_IF_METHOD(variants, ...) GR_IF_METHOD_##variants(__VA_ARGS__)
#define GR_IF_METHOD_fn_method(...) __VA_ARGS__
#define GR_IF_METHOD_method(...) __VA_ARGS__
#define GR_IF_METHOD_fn(...)
#define GR_IF_FN(variants, ...) GR_IF_FN_##variants(__VA_ARGS__)
#define GR_IF_FN_fn_method(...) __VA_ARGS__
#define GR_IF_FN_fn(...) __VA_ARGS__
#define GR_IF_FN_method(...)
// (first, args): a call's arguments with one put in front.
#define GR_WITH_FIRST(first, args) GR_WITH_FIRST_I(first, GR_ARGS_OF args)
#define GR_ARGS_OF(...) __VA_ARGS__
#define GR_WITH_FIRST_I(first, ...) (first __VA_OPT__(, ) __VA_ARGS__)
