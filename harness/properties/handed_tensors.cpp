#include "harness/properties/handed_tensors.h"

#include <algorithm>
#include <cstring>

#include "harness/tensor_layouts.h"

namespace kprop {

namespace {
bool named(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The integer type of a floating type's width, to compare bits rather than values.
at::ScalarType bits_of(at::ScalarType t) {
  switch (c10::elementSize(t)) {
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
  }
}

bool dense_on_cpu(const at::Tensor& t) { return t.is_cpu() && t.is_contiguous(); }
}  // namespace

NamedTensors with_copies_of(const NamedTensors& tensors, const std::vector<std::string>& names) {
  if (names.empty()) return tensors;
  NamedTensors out = tensors;
  for (const auto& [name, t] : tensors)
    if (t.defined() && named(names, name)) out.set(name, t.clone());
  return out;
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  if (!a.is_floating_point()) return a.equal(b);
  const auto bits = bits_of(a.scalar_type());
  return a.view(bits).equal(b.view(bits));
}

HandedTensors::HandedTensors(const NamedTensors& inputs, const NamedTensors& cotangents,
                             const std::vector<std::string>& exempt) {
  keep(inputs, exempt);
  keep(cotangents, exempt);
}

void HandedTensors::keep(const NamedTensors& tensors, const std::vector<std::string>& exempt) {
  for (const auto& [name, t] : tensors) {
    if (!t.defined() || named(exempt, name)) continue;
    Kept k{name, t, {}, {}};
    if (dense_on_cpu(t))
      k.bytes.assign(static_cast<const char*>(t.data_ptr()), t.nbytes());
    else
      k.copy = t.clone();
    kept_.push_back(std::move(k));
  }
}

bool HandedTensors::Kept::unchanged() const {
  if (copy.defined()) return same_bits(handed, copy);
  return dense_on_cpu(handed) && handed.nbytes() == bytes.size() &&
         std::memcmp(handed.data_ptr(), bytes.data(), bytes.size()) == 0;
}

at::Tensor HandedTensors::Kept::as_handed() const {
  if (copy.defined()) return copy.to(at::kCPU);
  at::Tensor t = at::empty(handed.sizes(), handed.options());
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

HandedTensors::Changes HandedTensors::changes() const {
  Changes c;
  for (const auto& k : kept_) {
    if (k.unchanged()) continue;
    c.now.set(k.name, k.handed.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true));
    c.before.set(k.name, k.as_handed());
  }
  return c;
}

void HandedTensors::restore(const Changes& changes) const {
  for (const auto& k : kept_)
    if (changes.before.has(k.name)) write_into(k.handed, changes.before.get(k.name));
}

}  // namespace kprop
