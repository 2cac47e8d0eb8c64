// ember/nn/serialize.h — a module's state dict as a safetensors checkpoint (the format and the
// errors: ember/io/safetensors.h).
#pragma once
#include <string>

#include "ember/io/safetensors.h"
#include "ember/nn/module.h"

namespace ember {

/// Saves a module's state dict: named_parameters() then named_buffers() (libtorch's names:
/// "0.weight", "encoder.bias", ...). Throws IOError (also when a parameter and a buffer share a
/// name).
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

/// Loads a state dict written by `save(module, ...)` (or by any tool, e.g. Python's safetensors)
/// into the module's existing parameters and buffers, in place. Throws IOError.
void load(nn::Module& module, const std::string& path);

/// The same for module handles: `nn::Sequential net; ember::save(net, "net.safetensors");`.
template <typename Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path,
          const Metadata& metadata = {}) {
  save(static_cast<const nn::Module&>(*module), path, metadata);
}
template <typename Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}

}  // namespace ember
