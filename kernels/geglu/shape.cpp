#include "kernels/geglu/shape.h"

namespace kprop::geglu {

Shape shape_of(const Case& c) {
  Shape s;
  s.batch = c.integer("batch");
  s.rows = c.integer("rows");
  s.cols = c.integer("cols");
  s.layout = c.choice("layout") == "fused" ? Layout::fused : Layout::contiguous;
  s.scale = c.integer("scale");
  s.num_cores = c.integer("num_cores");
  s.buffer_bytes = c.integer("buffer_bytes");
  return s;
}

std::string to_string(Layout layout) {
  return layout == Layout::fused ? "fused" : "contiguous";
}

}  // namespace kprop::geglu
