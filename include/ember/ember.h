// ember/ember.h — the whole public API.
#pragma once
#include "ember/autograd.h"
#include "ember/compile_ahead.h"
#include "ember/context.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/grad_mode.h"
#include "ember/jit.h"
#include "ember/nn.h"
#include "ember/optim.h"
#include "ember/profile.h"
#include "ember/serialize.h"
#include "ember/tensor.h"
