// Everything in gr::optim: the optimizers, LR schedulers and gradient clipping.
#pragma once

#include "nn/optim/adadelta.h"
#include "nn/optim/adagrad.h"
#include "nn/optim/adam.h"
#include "nn/optim/adamax.h"
#include "nn/optim/clip_grad.h"
#include "nn/optim/cosine_lr.h"
#include "nn/optim/lbfgs.h"
#include "nn/optim/lr_scheduler.h"
#include "nn/optim/nadam.h"
#include "nn/optim/one_cycle_lr.h"
#include "nn/optim/optimizer.h"
#include "nn/optim/radam.h"
#include "nn/optim/reduce_on_plateau_scheduler.h"
#include "nn/optim/rmsprop.h"
#include "nn/optim/sequential_lr.h"
#include "nn/optim/sgd.h"
