#include "kernels/causal_conv1d/known_defects.h"

#include "kernels/causal_conv1d/shape.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {

namespace {

// The vendored backward's BT for a case (before any clamp).
int64_t vendored_bt(const Shape& s) {
  return backward_tiles(s.total_length(), s.W, s.has_initial_state, s.num_cores, false).BT;
}

// A packed sequence shorter than W - 1 followed by another one: the shape of the leaks.
bool short_segment_before_another(const Shape& s) {
  if (s.layout != Layout::packed || s.num_sequences() < 2) return false;
  for (int64_t n = 0; n + 1 < s.num_sequences(); ++n)
    if (s.lengths[n] < s.W - 1) return true;
  return false;
}

const char* kShortDh0 = "dh0 [sequence shorter than W]";

}  // namespace

std::vector<KnownDefect> known_defects() {
  return {
      defect("dh0 over-count")
          .because("with BT < W every head chunk writes a dh0 slot summing W-1 rows from its "
                   "own first row, and the host sums all slots: dh0 comes back several times "
                   "too large")
          .in({"tiled@original"}).hunted_by("gradient").within({{"max_segments", 1}}).shows("dh0")
          .when([](const Case& c) {
            const Shape s = conv_shape(c);
            return s.num_sequences() == 1 && s.lengths[0] >= s.W && vendored_bt(s) < s.W;
          }),
      defect("dh0 slot collision")
          .because("the dh0 slot of chunk i_t of sequence n is written at i_t * B + n with B = 1 "
                   "when packed, so with BT < W slots of different sequences overwrite each other")
          .in({"tiled@original"}).hunted_by("vs_reference").shows("write conflict")
          .when([](const Case& c) { return conv_shape(c).num_sequences() >= 2; }),
      defect("dw head-row leak")
          .because("mask_head_rows = o_t < i_w admits rows past a short segment's end, so dy of "
                   "the next packed sequence enters dw (lengths [1,7], W=4, 48 cores)")
          .in({"tiled@clamped", "tiled@original"}).hunted_by("packed").shows("dw [taps that read h0]")
          .when([](const Case& c) { return short_segment_before_another(conv_shape(c)); }),
      defect("dh0 row leak")
          .because("the dh0 row loads are masked by channel only, so dh0 of a segment shorter "
                   "than W - 1 sums dy rows of the next packed sequence")
          .in({"tiled@clamped", "tiled@original"}).hunted_by("gradient").shows(kShortDh0)
          .when([](const Case& c) {
            const Shape s = conv_shape(c);
            return !s.has_final_state_grad && short_segment_before_another(s);
          }),
      defect("dht pass-through dropped")
          .because("for a sequence shorter than W the final state still holds h0 columns, but "
                   "the backward routes dht only into dx, so that share of dh0 is lost")
          .in({"tiled@original", "tiled@clamped", "tiled@fixed"}).hunted_by("gradient")
          .within({{"max_segments", 1}}).first_found_by_kprop().shows(kShortDh0)
          .when([](const Case& c) {
            const Shape s = conv_shape(c);
            return s.has_final_state_grad && s.num_sequences() == 1 && s.lengths[0] < s.W;
          }),
      defect("out-of-bounds dy load")
          .because("the head-row and dh0 row loads of the last sequence reach past the end of "
                   "dy when it is shorter than W - 1: a device memory checker would stop the "
                   "kernel")
          .in({"tiled@original", "tiled@clamped"}).hunted_by("cores").within({{"max_segments", 1}})
          .first_found_by_kprop().shows("out-of-bounds load")
          .when([](const Case& c) { return conv_shape(c).lengths.back() < conv_shape(c).W - 1; }),
  };
}

}  // namespace kprop::causal_conv1d
