// An ordered set of named tensors: a kernel's inputs, outputs or gradients.
//
// Properties are written against names ("y", "x", "initial_state"), never against a
// kernel's positional signature, which is what keeps them generic over kernels. A name
// may hold an undefined tensor (an absent optional input or output).
#pragma once

#include <ATen/ATen.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace kprop {

class NamedTensors {
 public:
  using Entry = std::pair<std::string, at::Tensor>;

  NamedTensors() = default;
  NamedTensors(std::initializer_list<Entry> entries) {
    for (const auto& [name, t] : entries) set(name, t);
  }

  // Sets (or replaces) the tensor of `name`, keeping first-insertion order.
  void set(const std::string& name, const at::Tensor& t) {
    for (auto& e : entries_)
      if (e.first == name) {
        e.second = t;
        return;
      }
    entries_.emplace_back(name, t);
  }
  // The tensor of `name`, or an undefined tensor.
  at::Tensor get(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.first == name) return e.second;
    return at::Tensor();
  }
  bool has(const std::string& name) const { return get(name).defined(); }

  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace kprop
