// The schema of scaled_tanh cases (generators/schema.h): rows, cols and the bias flag.
#pragma once

#include "generators/schema.h"

namespace kprop::scaled_tanh {

const Schema& schema();

}  // namespace kprop::scaled_tanh
