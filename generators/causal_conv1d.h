// RapidCheck generators of causal_conv1d Cases, biased to the kernel's edges.
//
// Every draw is weighted toward the values where tiled kernels break: segment lengths
// at the window (1, W-1, W, W+1) and at tile edges (BT-1, BT, BT+1), the real core
// counts of Ascend devices, and the channel widths the device kernel accepts. Every
// field shrinks toward its simplest value (fewer and shorter segments, W = 2, one core,
// no optional inputs), and every drawn or shrunk Case passes validate() by
// construction. The data seed never shrinks: it names the tensor contents.
#pragma once

#include <rapidcheck/Gen.h>
#include <rapidcheck/Shrinkable.h>

#include <cstdint>
#include <string>
#include <vector>

#include "generators/case.h"

namespace kprop {

// What a run may draw; the CLI and tests fill it.
struct CaseSpace {
  std::string impl = "tiled";
  std::string property = "vs_reference";
  // Drawn uniformly; shrinking moves toward the first one listed.
  std::vector<DType> dtypes{DType::float32};
  int64_t max_segments = 8;
  int64_t max_length = 64;  // typical upper bound of one segment's length (rarely exceeded up to 4*max_length)
  bool allow_dense = true;
};

rc::Gen<Case> causal_conv1d_cases(const CaseSpace& space);

// Draws one case deterministically (same seed & size -> same case): the shrinkable tree
// the runner shrinks. Size scales only the uniform parts of the draw (lengths, counts,
// split points), as RapidCheck's inRange does; boundary values are drawn at every size.
rc::Shrinkable<Case> draw_causal_conv1d_case(const CaseSpace& space, uint64_t seed,
                                             int size = 100);

}  // namespace kprop
