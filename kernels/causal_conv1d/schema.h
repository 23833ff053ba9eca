// The schema of causal_conv1d cases (generators/schema.h): the one list of its
// parameters, their bounds, dependencies and edge values.
#pragma once

#include "generators/schema.h"

namespace kprop::causal_conv1d {

const Schema& schema();

}  // namespace kprop::causal_conv1d
