#include "kernels/causal_conv1d/known_defects.h"

#include <algorithm>

#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {

namespace {

bool fails_on(const Verdict& v, const std::string& tensor, const std::string& region = "") {
  return std::any_of(v.tensors.begin(), v.tensors.end(), [&](const TensorError& t) {
    return !t.passed() && t.tensor == tensor && (region.empty() || t.region == region);
  });
}

bool memory_finding(const Verdict& v, MemoryFinding::Kind kind, const std::string& tensor) {
  return std::any_of(v.memory.begin(), v.memory.end(), [&](const MemoryFinding& m) {
    return m.kind == kind && m.tensor == tensor;
  });
}

// The vendored backward's BT for a case (before any clamp).
int64_t vendored_bt(const Case& c) {
  return backward_tiles(c.total_length(), c.W, c.has_initial_state, c.num_cores, false).BT;
}

// A packed sequence shorter than W - 1 followed by another one: the shape of the leaks.
bool short_segment_before_another(const Case& c) {
  if (c.layout != Layout::packed || c.num_sequences() < 2) return false;
  for (int64_t n = 0; n + 1 < c.num_sequences(); ++n)
    if (c.lengths[n] < c.W - 1) return true;
  return false;
}

const char* kShort = "sequence shorter than W";

}  // namespace

const std::vector<KnownDefect>& known_defects() {
  static const std::vector<KnownDefect> defects{
      {"dh0 over-count",
       "with BT < W every head chunk writes a dh0 slot summing W-1 rows from its own first "
       "row, and the host sums all slots: dh0 comes back several times too large",
       {"tiled@original"}, "gradient", 1, true,
       [](const Failure& f) {
         const Case& c = f.minimal();
         return fails_on(f.verdict(), "dh0") && c.num_sequences() == 1 &&
                c.lengths[0] >= c.W && vendored_bt(c) < c.W;
       }},
      {"dh0 slot collision",
       "the dh0 slot of chunk i_t of sequence n is written at i_t * B + n with B = 1 when "
       "packed, so with BT < W slots of different sequences overwrite each other",
       {"tiled@original"}, "vs_reference", 8, true,
       [](const Failure& f) {
         return f.minimal().num_sequences() >= 2 &&
                memory_finding(f.verdict(), MemoryFinding::Kind::write_conflict, "dh0");
       }},
      {"dw head-row leak",
       "mask_head_rows = o_t < i_w admits rows past a short segment's end, so dy of the "
       "next packed sequence enters dw (lengths [1,7], W=4, 48 cores)",
       {"tiled@clamped", "tiled@original"}, "packed", 8, true,
       [](const Failure& f) {
         return fails_on(f.verdict(), "dw") && short_segment_before_another(f.minimal());
       }},
      {"dh0 row leak",
       "the dh0 row loads are masked by channel only, so dh0 of a segment shorter than "
       "W - 1 sums dy rows of the next packed sequence",
       {"tiled@clamped", "tiled@original"}, "gradient", 8, true,
       [](const Failure& f) {
         return fails_on(f.verdict(), "dh0", kShort) && !f.minimal().has_final_state_grad &&
                short_segment_before_another(f.minimal());
       }},
      {"dht pass-through dropped",
       "for a sequence shorter than W the final state still holds h0 columns, but the "
       "backward routes dht only into dx, so that share of dh0 is lost",
       {"tiled@original", "tiled@clamped", "tiled@fixed"}, "gradient", 1, false,
       [](const Failure& f) {
         const Case& c = f.minimal();
         return fails_on(f.verdict(), "dh0", kShort) && c.has_final_state_grad &&
                c.num_sequences() == 1 && c.lengths[0] < c.W;
       }},
      {"out-of-bounds dy load",
       "the head-row and dh0 row loads of the last sequence reach past the end of dy when "
       "it is shorter than W - 1: a device memory checker would stop the kernel",
       {"tiled@original", "tiled@clamped"}, "cores", 1, false,
       [](const Failure& f) {
         const Case& c = f.minimal();
         return memory_finding(f.verdict(), MemoryFinding::Kind::out_of_bounds_load, "dy") &&
                c.lengths.back() < c.W - 1;
       }},
  };
  return defects;
}

}  // namespace kprop::causal_conv1d
