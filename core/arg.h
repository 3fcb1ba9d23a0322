// GR_ARG: the chainable setter/getter of libtorch-style option structs (TORCH_ARG).
#pragma once

// GR_ARG(int64_t, stride) = 1;  gives  options.stride(2)  and  options.stride().
#define GR_ARG(T, name)                              \
 public:                                             \
  auto& name(const T& value) {                       \
    name##_ = value;                                 \
    return *this;                                    \
  }                                                  \
  const T& name() const { return name##_; }          \
                                                     \
 private:                                            \
  T name##_
