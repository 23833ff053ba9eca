// A fingerprint of a problem's input tensors (FNV-1a over their bytes), stored in case
// files so that replay can prove it rebuilt the very same tensors from the seed.
#pragma once

#include <string>

#include "harness/model/kernel.h"

namespace kprop {

std::string inputs_fingerprint(const Problem& p);

}  // namespace kprop
