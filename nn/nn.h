// Everything in gr::nn: Module, the layers, functional, init.
#pragma once

#include "nn/cloneable.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/modules/basic.h"
#include "nn/modules/batchnorm.h"
#include "nn/modules/conv.h"
#include "nn/modules/linear.h"
#include "nn/modules/loss.h"
#include "nn/modules/modulelist.h"
#include "nn/modules/pooling.h"
#include "nn/modules/sequential.h"
#include "nn/serialize.h"
