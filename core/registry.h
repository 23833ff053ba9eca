// The registries of what registers itself at load time: kernels, properties, precision
// models. One name each; a second of a name is refused (a library loaded twice), and an
// unknown name is a usage error that lists the known ones.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"

namespace kprop {

// T has `std::string name() const`. `what` and `plural` name T in errors: "unknown
// property 'x'; known properties: ...".
template <typename T>
class Registry {
 public:
  Registry(std::string what, std::string plural)
      : what_(std::move(what)), plural_(std::move(plural)) {}

  // False, and `item` dropped, when its name is taken.
  bool add(std::unique_ptr<T> item) {
    if (find_or_null(item->name()) != nullptr) return false;
    items_.push_back(std::move(item));
    return true;
  }

  const T* find_or_null(const std::string& name) const {
    for (const auto& item : items_)
      if (item->name() == name) return item.get();
    return nullptr;
  }

  const T& find(const std::string& name) const {  // throws UsageError
    if (const T* item = find_or_null(name)) return *item;
    throw UsageError(fmt::format("unknown {} '{}'; known {}: {}", what_, name, plural_,
                                 fmt::join(names(), ", ")));
  }

  std::vector<std::string> names() const {  // sorted
    std::vector<std::string> out;
    for (const auto& item : items_) out.push_back(item->name());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string what_, plural_;
  std::vector<std::unique_ptr<T>> items_;
};

}  // namespace kprop
