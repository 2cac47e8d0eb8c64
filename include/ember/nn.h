// ember/nn.h — modules, functional losses and initialisers.
#pragma once
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules.h"
