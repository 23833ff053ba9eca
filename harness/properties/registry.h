// Registration of properties: each property file registers itself at load time.
#pragma once

#include <memory>

#include "harness/property.h"

namespace kprop {

bool register_property(std::unique_ptr<Property> property);

}  // namespace kprop
