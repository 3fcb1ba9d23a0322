// Cloneable<Derived>: libtorch's base for modules that clone(), accepted for ported code.
// Every gradring module clones already (Note [Module clone] in nn/module_holder.h), so this
// only adds libtorch's reset() hook, which a ported constructor calls itself.
#pragma once

#include <string>

#include "nn/module.h"

namespace gr::nn {

template <class Derived>
class Cloneable : public Module {
 public:
  explicit Cloneable(std::string name = "Module") : Module(std::move(name)) {}
  // (Re)creates the parameters, buffers and submodules; libtorch's constructors call it.
  virtual void reset() {}
};

}  // namespace gr::nn
