#include "kernels/causal_conv1d/shape.h"

#include <numeric>

namespace kprop::causal_conv1d {

int64_t Shape::total_length() const {
  return std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
}

std::vector<int64_t> Shape::effective_splits() const {
  if (!splits.empty()) return splits;
  std::vector<int64_t> half;
  for (int64_t L : lengths) half.push_back(std::max<int64_t>(1, L / 2));
  return half;
}

Shape conv_shape(const Case& c) {
  Shape s;
  s.layout = c.choice("layout") == "dense" ? Layout::dense : Layout::packed;
  s.lengths = c.integers("lengths");
  s.D = c.integer("D");
  s.W = c.integer("W");
  s.num_cores = c.integer("num_cores");
  s.activation = c.choice("activation") == "silu" ? Activation::silu : Activation::none;
  s.has_bias = c.flag("bias");
  s.has_initial_state = c.flag("initial_state");
  s.has_final_state_grad = c.flag("final_state_grad");
  s.splits = c.integers("splits");
  return s;
}

Case with_shape(const Case& c, const Shape& s) {
  Case out = c;
  out.set("layout", to_string(s.layout));
  out.set("lengths", s.lengths);
  out.set("D", s.D);
  out.set("W", s.W);
  out.set("num_cores", s.num_cores);
  out.set("activation", to_string(s.activation));
  out.set("bias", s.has_bias);
  out.set("initial_state", s.has_initial_state);
  out.set("final_state_grad", s.has_final_state_grad);
  out.set("splits", s.splits);
  return out;
}

std::string to_string(Activation a) { return a == Activation::silu ? "silu" : "none"; }
std::string to_string(Layout l) { return l == Layout::dense ? "dense" : "packed"; }

}  // namespace kprop::causal_conv1d
