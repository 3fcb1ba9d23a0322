// Included at the top of every op list: each generic form the reader left undefined reads as
// nothing (and is marked, so that core/op_list_end.h undefines it). See Note [Op lists] in
// core/op_list.h. No include guard: read once per list.
#ifndef GR_OP
#define GR_OP(...)
#define GR_OP_IS_EMPTY_
#endif
#ifndef GR_OP_BY_METHOD
#define GR_OP_BY_METHOD(...)
#define GR_OP_BY_METHOD_IS_EMPTY_
#endif
#ifndef GR_OP_FN
#define GR_OP_FN(...)
#define GR_OP_FN_IS_EMPTY_
#endif
#ifndef GR_OP_METHOD
#define GR_OP_METHOD(...)
#define GR_OP_METHOD_IS_EMPTY_
#endif
#ifndef GR_OP_INPLACE
#define GR_OP_INPLACE(...)
#define GR_OP_INPLACE_IS_EMPTY_
#endif
#ifndef GR_OP_INPLACE_OF
#define GR_OP_INPLACE_OF(...)
#define GR_OP_INPLACE_OF_IS_EMPTY_
#endif
#ifndef GR_OP_INPLACE_METHOD
#define GR_OP_INPLACE_METHOD(...)
#define GR_OP_INPLACE_METHOD_IS_EMPTY_
#endif
