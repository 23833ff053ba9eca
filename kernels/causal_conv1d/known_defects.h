// The defects of the historical Ascend states that kprop knows (harness/model/kernel.h's
// KnownDefect): which implementation has each, which property hunts it, the symptom it
// shows and the shape of its minimal case.
#pragma once

#include <vector>

#include "harness/model/kernel.h"

namespace kprop::causal_conv1d {

std::vector<KnownDefect> known_defects();

}  // namespace kprop::causal_conv1d
