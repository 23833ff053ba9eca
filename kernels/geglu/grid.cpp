#include "kernels/geglu/grid.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace kprop::geglu {

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t bytes_per_element(at::ScalarType dtype, Pass pass) {
  const int64_t s = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t w = dtype == at::kDouble ? 8 : 4;
  return pass == Pass::forward ? 3 * s + 2 * w : 5 * s + 3 * w;
}

int64_t buffer_block(int64_t buffer_bytes, at::ScalarType dtype, Pass pass) {
  const int64_t fits = buffer_bytes / bytes_per_element(dtype, pass);
  TORCH_CHECK(fits >= 1, "geglu: a buffer of ", buffer_bytes, " bytes holds no element (",
              bytes_per_element(dtype, pass), " bytes each)");
  int64_t block = 1;
  while (block * 2 <= fits) block *= 2;
  return block;
}

int64_t rows_block(int64_t cols, int64_t buffer_bytes, at::ScalarType dtype, Pass pass) {
  return std::min(next_pow2(cols), buffer_block(buffer_bytes, dtype, pass));
}

FlatGrid flat_grid(int64_t total, int64_t num_cores, int64_t buffer_bytes,
                   at::ScalarType dtype, Pass pass) {
  FlatGrid g;
  g.block = buffer_block(buffer_bytes, dtype, pass);
  g.blocks = cdiv(total, g.block);
  g.programs = std::min(num_cores, g.blocks);
  return g;
}

}  // namespace kprop::geglu
