// ember/nn/container.h — ModuleList and ModuleDict (libtorch's containers): they hold modules as
// children, so their parameters and buffers are the module's, named "<index>.<name>" or
// "<key>.<name>" in the state dict as libtorch names them. Neither has a forward: the owner
// calls its modules.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <typename... Ms>
  explicit ModuleListImpl(Ms&&... modules) {
    (push_back(std::forward<Ms>(modules)), ...);
  }
  /// Appends a module (a handle or a shared_ptr), named by its index.
  void push_back(std::shared_ptr<Module> m);
  template <typename H>
  void push_back(const H& holder) requires requires {
    holder.ptr();
  }
  { push_back(std::shared_ptr<Module>(holder.ptr())); }
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  /// The module at index i; IndexError beyond size().
  std::shared_ptr<Module> operator[](size_t i) const;
  /// The module at index i as M (libtorch's ptr<M>); ValueError when it is not an M.
  template <typename M>
  std::shared_ptr<M> ptr(size_t i) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!p) throw ValueError("ModuleList: module " + std::to_string(i) + " is not of that type");
    return p;
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  /// The modules in order (update's rule for repeated keys).
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& m) {
    update(m);
  }
  /// Adds a module under a new key; ValueError when the key is taken or empty, or holds a dot.
  void insert(const std::string& key, std::shared_ptr<Module> m);
  template <typename H>
  void insert(const std::string& key, const H& holder) requires requires {
    holder.ptr();
  }
  { insert(key, std::shared_ptr<Module>(holder.ptr())); }
  /// Inserts each pair; a key already present keeps its place and takes the new module.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& m);
  bool contains(const std::string& key) const;
  size_t size() const { return keys_.size(); }
  /// The keys in insertion order.
  const std::vector<std::string>& keys() const { return keys_; }
  /// The module under key; ValueError when there is none.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <typename M>
  std::shared_ptr<M> ptr(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[key]);
    if (!p) throw ValueError("ModuleDict: module '" + key + "' is not of that type");
    return p;
  }

 private:
  std::vector<std::string> keys_;
};
EMBER_MODULE(ModuleDict);

}  // namespace ember::nn
