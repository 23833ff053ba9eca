// The text kprop hunt prints for each hunt (harness/api/hunt.h) as it ends; the Python
// API's kprop.hunt prints the same (python/module.cpp). `cases`: the hunt's budget.
#pragma once

#include <cstdint>

#include "harness/api/hunt.h"

namespace kprop {

void print_hunt(const Hunt& hunt, int64_t cases);

}  // namespace kprop
