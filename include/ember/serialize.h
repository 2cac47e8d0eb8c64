// ember/serialize.h — checkpoints in the safetensors format: any list of named tensors (io), a
// module's state dict (nn) and an optimizer's state (optim). Each layer's header documents its
// part.
#pragma once
#include "ember/io/safetensors.h"
#include "ember/nn/serialize.h"
#include "ember/optim/serialize.h"
