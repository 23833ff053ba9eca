// A fuzzer's input, as kprop reads it: one byte choosing the property, then the bytes
// the kernel's generator decodes into a Case (generators/draw.h). Any byte string is a
// valid input; the empty one is the simplest case of the first property.
//
//   byte 0      property: the kernel's properties()[byte % count] (ignored when the
//               target is pinned to one property)
//   bytes 1..   the case: data seed (8 bytes), the flags (1 byte, a bit each), then
//               dtype, distribution, parameters (generators/choices.h)
//
// encode_fuzz_input() writes the bytes of a known case (corpus cases seed the fuzzers).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/schema.h"

namespace kprop {

struct FuzzSpace {
  std::string kernel;
  std::string impl;
  std::string property;  // empty: drawn from byte 0
  std::map<std::string, int64_t> limits;  // the schema's limits; absent: defaults
};

Case decode_fuzz_input(const FuzzSpace& space, const uint8_t* data, size_t size);

// What the generator draws the cases of `property` from, in `space`: the whole range of
// each parameter (size 100), the property's dtypes, the space's limits.
CaseSpace fuzz_case_space(const FuzzSpace& space, const std::string& property);

// The shortest bytes that decode to `c` (trailing zero bytes dropped: absent bytes read as
// zeros). Throws CaseError when `c` cannot be drawn in `space` (its property is not the
// kernel's, its dtype not the property's, or it lies outside the space's limits).
std::vector<uint8_t> encode_fuzz_input(const FuzzSpace& space, const Case& c);

}  // namespace kprop
