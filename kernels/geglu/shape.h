// A geglu case read once into a typed view (the schema has validated it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generators/case.h"

namespace kprop::geglu {

enum class Layout { contiguous, fused };

struct Shape {
  int64_t batch = 1, rows = 1, cols = 1;  // a, b: [rows, cols], or [batch, rows, cols]
  Layout layout = Layout::contiguous;
  int64_t scale = 1;
  int64_t num_cores = 1, buffer_bytes = 0;

  std::vector<int64_t> sizes() const {
    if (batch == 1) return {rows, cols};
    return {batch, rows, cols};
  }
  int64_t kernel_rows() const { return batch * rows; }  // the leading dims flattened
  int64_t total() const { return batch * rows * cols; }
};

Shape shape_of(const Case& c);

std::string to_string(Layout layout);

}  // namespace kprop::geglu
