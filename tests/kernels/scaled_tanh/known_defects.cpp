#include "tests/kernels/scaled_tanh/known_defects.h"

#include "tests/kernels/scaled_tanh/columns.h"

namespace kprop::scaled_tanh {

std::vector<KnownDefect> known_defects() {
  return {
      {"remainder mask typo",
       "the remainder mask for 7 columns is 0x3F instead of 0x7F: in rows of 7 mod 8 columns "
       "the last column is never written, forward or backward (so only the reference sees it)",
       {"toy@tail"}, "vs_reference", {}, false, "y [last column]",
       [](const Case& c) {
         // One row of the remainder alone: no block, no bias is needed.
         return c.integer("rows") == 1 && c.integer("cols") == kVectorWidth - 1 &&
                !c.flag("bias");
       }},
      {"bias added twice",
       "the block step adds the bias, then its fused epilogue adds it again: y = tanh(x) s + 2b "
       "in every whole 8-wide block, right in the remainder",
       {"toy@bias"}, "vs_reference", {}, false, "y [8-wide blocks]",
       [](const Case& c) {
         // One row of exactly one block, with the bias that it adds twice.
         return c.integer("rows") == 1 && c.integer("cols") == kVectorWidth && c.flag("bias");
       }},
  };
}

}  // namespace kprop::scaled_tanh
