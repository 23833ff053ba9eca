#include "harness/storage/fingerprint.h"

#include <fmt/format.h>

namespace kprop {

std::string inputs_fingerprint(const Problem& p) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](const void* data, size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  };
  for (const auto& [name, t] : p.inputs) {
    mix(name.data(), name.size());
    if (!t.defined()) continue;
    const auto c = t.contiguous();
    mix(c.data_ptr(), c.numel() * c.element_size());
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

}  // namespace kprop
