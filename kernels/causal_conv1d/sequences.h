// The sequence family of causal_conv1d: chunked calls with the state handed on, and
// packed sequences run one by one (harness/model/sequence_family.h).
#pragma once

#include "harness/model/sequence_family.h"

namespace kprop::causal_conv1d {

const SequenceFamily& sequence_family();

}  // namespace kprop::causal_conv1d
