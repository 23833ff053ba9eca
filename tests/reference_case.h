#pragma once
// Case `seed` of a kernel for its reference implementation, drawn at full size (the whole
// range of every parameter, offsets that only the largest size draws included): for tests
// that go over the problems of every kernel.
#include <cstdint>

#include "generators/choices.h"
#include "generators/draw.h"
#include "harness/model/kernel.h"

inline kprop::Case reference_case(const kprop::Kernel& kernel, uint64_t seed) {
  kprop::RandomChoices choices(seed);
  kprop::CaseSpace space;
  space.impl = "reference";
  space.size = 100;
  kprop::Case c = kprop::draw_case(kernel.schema(), choices, space);
  c.kernel = kernel.name();
  return c;
}
