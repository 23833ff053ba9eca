// The schema of geglu cases (generators/schema.h): the one list of its parameters, their
// bounds, dependencies and edge values.
#pragma once

#include "generators/schema.h"

namespace kprop::geglu {

const Schema& schema();

}  // namespace kprop::geglu
