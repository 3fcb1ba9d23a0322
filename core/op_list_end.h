// Included at the end of every op list: undefines the generic forms core/op_list_begin.h gave an
// empty meaning, so the reader's own definitions (if any) are the only ones left. No include guard.
#ifdef GR_OP_IS_EMPTY_
#undef GR_OP
#undef GR_OP_IS_EMPTY_
#endif
#ifdef GR_OP_BY_METHOD_IS_EMPTY_
#undef GR_OP_BY_METHOD
#undef GR_OP_BY_METHOD_IS_EMPTY_
#endif
#ifdef GR_OP_FN_IS_EMPTY_
#undef GR_OP_FN
#undef GR_OP_FN_IS_EMPTY_
#endif
#ifdef GR_OP_METHOD_IS_EMPTY_
#undef GR_OP_METHOD
#undef GR_OP_METHOD_IS_EMPTY_
#endif
#ifdef GR_OP_INPLACE_IS_EMPTY_
#undef GR_OP_INPLACE
#undef GR_OP_INPLACE_IS_EMPTY_
#endif
#ifdef GR_OP_INPLACE_OF_IS_EMPTY_
#undef GR_OP_INPLACE_OF
#undef GR_OP_INPLACE_OF_IS_EMPTY_
#endif
#ifdef GR_OP_INPLACE_METHOD_IS_EMPTY_
#undef GR_OP_INPLACE_METHOD
#undef GR_OP_INPLACE_METHOD_IS_EMPTY_
#endif
