// ember/optim.h — optimizers, learning-rate schedulers and gradient clipping.
#pragma once
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
