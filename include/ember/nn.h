// ember/nn.h — modules, functional losses and initialisers.
#pragma once
#include "ember/nn/activation.h"
#include "ember/nn/attention.h"
#include "ember/nn/container.h"
#include "ember/nn/conv.h"
#include "ember/nn/dropout.h"
#include "ember/nn/embedding.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"
#include "ember/nn/normalization.h"
#include "ember/nn/pooling.h"
