// ModuleList and ModuleDict (include/ember/nn/container.h): the children list of Module is their
// storage, so naming and recursion are Module's.
#include "ember/nn/container.h"

#include <algorithm>

namespace ember::nn {

void ModuleListImpl::push_back(std::shared_ptr<Module> m) {
  if (!m) throw ValueError("ModuleList: cannot hold an empty module");
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t i) const {
  if (i >= modules_.size())
    throw IndexError("ModuleList: index " + std::to_string(i) + " is out of range for " +
                     std::to_string(modules_.size()) + " modules");
  return modules_[i];
}

void ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> m) {
  if (key.empty() || key.find('.') != std::string::npos)
    throw ValueError("ModuleDict: a key must be non-empty and without '.', got '" + key + "'");
  if (!m) throw ValueError("ModuleDict: cannot hold an empty module");
  if (contains(key)) throw ValueError("ModuleDict: key '" + key + "' is already present");
  register_module(key, std::move(m));
  keys_.push_back(key);
}

void ModuleDictImpl::update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& m) {
  for (const auto& [key, module] : m) {
    if (contains(key)) {
      if (!module) throw ValueError("ModuleDict: cannot hold an empty module");
      replace_module(key, module);
    } else {
      insert(key, module);
    }
  }
}

bool ModuleDictImpl::contains(const std::string& key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  for (const auto& [n, c] : named_children())
    if (n == key) return c;
  throw ValueError("ModuleDict: no module under key '" + key + "'");
}

}  // namespace ember::nn
