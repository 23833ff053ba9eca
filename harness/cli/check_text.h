// The text kprop check prints (harness/api/check.h): the plan before the first case, the
// report after the last. The Python API's kprop.check prints the same (python/module.cpp).
#pragma once

#include "harness/api/check.h"

namespace kprop {

void print_check_plan(const CheckPlan& plan);
void print_check_report(const CheckRequest& request, const CheckReport& report);

}  // namespace kprop
