#include "harness/fuzz/fuzz_input.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "generators/draw.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"

namespace kprop {

CaseSpace fuzz_case_space(const FuzzSpace& space, const std::string& property) {
  CaseSpace s;
  s.impl = space.impl;
  s.property = property;
  s.dtypes = find_property(property).dtypes();
  s.limits = space.limits;
  return s;  // size 100: the whole range, as the searches reach after their first cases
}

Case decode_fuzz_input(const FuzzSpace& space, const uint8_t* data, size_t size) {
  const Kernel& kernel = find_kernel(space.kernel);
  std::string property = space.property;
  if (property.empty()) {
    const auto properties = kernel.properties();
    property = properties[size == 0 ? 0 : data[0] % properties.size()];
  }
  const uint8_t* rest = size == 0 ? data : data + 1;
  return decode(kernel.schema(), rest, size == 0 ? 0 : size - 1,
                fuzz_case_space(space, property));
}

std::vector<uint8_t> encode_fuzz_input(const FuzzSpace& space, const Case& c) {
  const Kernel& kernel = find_kernel(space.kernel);
  if (c.kernel != space.kernel)
    throw CaseError(fmt::format("a {} case cannot seed a {} target", c.kernel, space.kernel));
  const auto properties = kernel.properties();
  const auto it = std::find(properties.begin(), properties.end(), c.property);
  if (it == properties.end())
    throw CaseError(fmt::format("property '{}' is not one of {}'s", c.property, c.kernel));
  if (!space.property.empty() && space.property != c.property)
    throw CaseError(fmt::format("property '{}': the target checks only '{}'", c.property,
                                space.property));
  const CaseSpace s = fuzz_case_space(space, c.property);
  if (std::find(s.dtypes.begin(), s.dtypes.end(), c.dtype) == s.dtypes.end())
    throw CaseError(fmt::format("dtype {} is not drawn by property '{}'", to_string(c.dtype),
                                c.property));
  std::vector<uint8_t> bytes{static_cast<uint8_t>(it - properties.begin())};
  const auto rest = encode(kernel.schema(), c, s);
  bytes.insert(bytes.end(), rest.begin(), rest.end());
  // Bytes past the end decode as zeros (generators/choices.h), so trailing zeros say
  // nothing: without them the input is as short as its case allows, which libFuzzer's
  // length control (inputs that start at a few bytes and grow) needs.
  while (!bytes.empty() && bytes.back() == 0) bytes.pop_back();
  return bytes;
}

}  // namespace kprop
