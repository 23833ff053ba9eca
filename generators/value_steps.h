// The shrink steps of one integer value, toward its simplest: what a ParamSpec shrinks
// along (generators/schema.h) and what shrinking a case tries first (generators/shrink.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "generators/case.h"

namespace kprop {

// The simplest value first, then halfway points, then one less: a line from x toward
// `simplest`, as RapidCheck's towards(). The default steps of an integer.
std::vector<int64_t> towards(int64_t x, int64_t simplest);

// Steps of a size toward 1 along blocks of `width` (a vector width, a tile): the remainder
// alone (every whole block dropped), one block fewer, then towards(x, 1). A failure that
// needs a certain remainder keeps it while whole blocks go; towards() alone would lose it
// (at 15 columns of 8-wide blocks: 1, 8, 12 and 14 all lose the remainder of 7).
// For ParamSpec::shrinks.
std::function<std::vector<int64_t>(int64_t x, const Case&, size_t)> along_blocks(int64_t width);

}  // namespace kprop
