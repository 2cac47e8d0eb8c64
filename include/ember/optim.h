// ember/optim.h — optimizers and gradient clipping.
#pragma once
#include "ember/optim/optimizer.h"
