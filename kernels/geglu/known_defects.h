// The variants of the flatten-1D port as harness/model/kernel.h's KnownDefect: which
// implementation has each, the property that hunts it, the symptom it shows and the shape
// of its minimal case.
#pragma once

#include <vector>

#include "harness/model/kernel.h"

namespace kprop::geglu {

std::vector<KnownDefect> known_defects();

}  // namespace kprop::geglu
