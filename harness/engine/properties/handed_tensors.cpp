#include "harness/engine/properties/handed_tensors.h"
#include "harness/engine/property.h"

#include <algorithm>
#include <cstring>

#include "harness/model/tensor_layouts.h"

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
    Kept k{name, t, whole_storage(t), {}, {}};
    if (t.is_cpu())
      k.bytes.assign(static_cast<const char*>(k.storage.data_ptr()), k.storage.nbytes());
    else
      k.copy = k.storage.clone();
    kept_.push_back(std::move(k));
  }
}

bool HandedTensors::Kept::unchanged() const {
  if (copy.defined()) return same_bits(storage, copy);
  return storage.nbytes() == bytes.size() &&
         std::memcmp(storage.data_ptr(), bytes.data(), bytes.size()) == 0;
}

at::Tensor HandedTensors::Kept::storage_before() const {
  if (copy.defined()) return copy.to(at::kCPU);
  at::Tensor t = at::empty(storage.sizes(), storage.options());
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

namespace {

// The elements of `now` (a storage, flat) that differ from `before`, and are not among the
// elements `t` addresses, counted by side.
std::vector<HandedTensors::Stray> strays_around(const std::string& name, const at::Tensor& t,
                                                const at::Tensor& now, const at::Tensor& before) {
  const auto bits = bits_of(now.scalar_type());
  at::Tensor changed = now.is_floating_point() ? now.view(bits).ne(before.view(bits)) : now.ne(before);
  at::Tensor addressed = at::zeros_like(changed);
  if (t.numel() > 0) addressed.as_strided(t.sizes(), t.strides(), t.storage_offset()).fill_(true);
  changed &= addressed.logical_not();
  if (!changed.any().item<bool>()) return {};
  const int64_t first = t.storage_offset();
  int64_t last = first;  // the last element t addresses
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  const at::Tensor where = changed.nonzero().reshape({-1});
  const int64_t n = now.numel();
  const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> sides = {
      {"before its start", {0, first}},
      {"between its elements", {first, last + 1}},
      {"past its end", {last + 1, n}}};
  std::vector<HandedTensors::Stray> out;
  for (const auto& [side, range] : sides) {
    const at::Tensor in = where.masked_select(where.ge(range.first).logical_and(where.lt(range.second)));
    if (in.numel() > 0)
      out.push_back({name, side, in[0].item<int64_t>() - first, in.numel()});
  }
  return out;
}

}  // namespace

HandedTensors::Changes HandedTensors::changes() const {
  Changes c;
  for (const auto& k : kept_) {
    if (k.unchanged()) continue;
    const at::Tensor now = k.storage.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
    const at::Tensor before = k.storage_before();
    auto as_handed = [&](const at::Tensor& s) {
      return s.as_strided(k.handed.sizes(), k.handed.strides(), k.handed.storage_offset());
    };
    if (!same_bits(as_handed(now), as_handed(before))) {
      c.now.set(k.name, as_handed(now).clone());
      c.before.set(k.name, as_handed(before).clone());
    }
    for (auto& s : strays_around(k.name, k.handed, now, before)) c.strays.push_back(std::move(s));
  }
  return c;
}

void HandedTensors::restore() const {
  for (const auto& k : kept_)
    if (!k.unchanged()) k.storage.copy_(k.storage_before());
}

}  // namespace kprop
