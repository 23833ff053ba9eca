// The schema of geglu cases. The generator leans on the edges of the device kernels'
// blocks (grid.h), which the buffer budget and the dtype set: column counts one short of,
// at and one past a block (where rows' column loop and its mask meet), primes and odd
// counts; row counts that leave the flat grid's last block with 0, 1 or BLOCK - 1
// elements. Small budgets (a few hundred bytes: blocks of 4 to 64 elements) make those
// edges reachable by small cases; the real budget (an Ascend 910B's 192 KiB) is the
// simplest value, so a minimal case keeps a small one only when it needs it.
#include "kernels/geglu/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "harness/model/random_tensor.h"
#include "kernels/geglu/grid.h"

namespace kprop::geglu {

namespace {

constexpr int64_t kMaxRows = 4096, kMaxCols = 65536, kMaxBatch = 16;

// The blocks the device kernels use for a case drawn so far (dtype and buffer_bytes set),
// forward and backward.
std::vector<int64_t> blocks(const Case& c) {
  const auto dtype = scalar_type(c.dtype);
  const int64_t budget = c.integer("buffer_bytes");
  std::set<int64_t> out;
  for (Pass pass : {Pass::forward, Pass::backward})
    if (budget >= bytes_per_element(dtype, pass)) out.insert(buffer_block(budget, dtype, pass));
  return {out.begin(), out.end()};
}

// Column counts one short of, at and one past a block (and two blocks), up to `most`.
std::vector<int64_t> column_edges(const Case& c, int64_t most) {
  std::set<int64_t> edges;
  for (int64_t block : blocks(c))
    for (int64_t cols : {block - 1, block, block + 1, 2 * block - 1, 2 * block + 1})
      if (cols >= 1 && cols <= most) edges.insert(cols);
  return {edges.begin(), edges.end()};
}

// Row counts (up to `most`) for which the flat grid's last block holds 0, 1 or BLOCK - 1
// elements: total = batch · rows · cols at a multiple of BLOCK, or one past or short of it.
std::vector<int64_t> row_edges(const Case& c, int64_t most) {
  const int64_t per_row = c.integer("batch") * c.integer("cols");
  std::set<int64_t> edges;
  for (int64_t block : blocks(c))
    for (int64_t rows = 1; rows <= most; ++rows) {
      const int64_t tail = rows * per_row % block;
      if (block > 1 && (tail == 0 || tail == 1 || tail == block - 1)) edges.insert(rows);
    }
  return {edges.begin(), edges.end()};
}

std::vector<std::string> size_problems(const Case& c) {
  const int64_t limit = max_elements();
  // Within the bounds the product cannot overflow: 16 · 4096 · 65536 · 2 < 2^63.
  const int64_t total = c.integer("batch") * c.integer("rows") * c.integer("cols");
  const bool fused = c.choice("layout") == "fused";
  const int64_t largest = fused ? 2 * total : total;  // the fused projection [.., 2·cols]
  if (largest <= limit) return {};
  return {fmt::format("rows: {} would hold {} elements, more than the limit {} "
                      "(KPROP_MAX_ELEMENTS raises it)",
                      fused ? "the fused projection" : "a", largest, limit)};
}

Schema make_schema() {
  Schema s;
  s.kernel = "geglu";
  s.limits = {
      {"max_rows", 8, 1, kMaxRows, "most rows of a uniform draw (edges of the flat grid aside)"},
      {"max_cols", 64, 1, kMaxCols / 4, "most columns of a uniform draw; block edges up to 4x"},
  };

  ParamSpec budget = param_spec("buffer_bytes", ParamType::integer,
                                "on-chip buffer budget in bytes: sets the kernels' blocks",
                                kAscend910bBufferBytes);
  budget.static_bounds = {64, 1 << 20};
  budget.draw = [](const DrawContext&) {
    return std::vector<IntOption>{
        IntOption::just(25, kAscend910bBufferBytes),
        IntOption::any_of(40, {256, 320, 384, 512, 768, 1024}),
        IntOption::range(35, 64, 4096)};
  };

  ParamSpec cores = param_spec("num_cores", ParamType::integer,
                               "vector cores of the emulated device (flat's grid)", int64_t{1});
  cores.default_value = int64_t{48};
  cores.static_bounds = {1, 4096};
  cores.draw = [](const DrawContext&) {
    // The vector-core counts of real Ascend parts, 48 (the 910B2C) the most.
    return std::vector<IntOption>{IntOption::just(16, 48), IntOption::any_of(18, {20, 24, 40}),
                                  IntOption::range(30, 1, 8),
                                  IntOption::any_of(10, {1, 2, 4, 8, 16, 32, 64}),
                                  IntOption::range(26, 1, 64)};
  };

  ParamSpec cols = param_spec("cols", ParamType::integer,
                              "columns of a and b (the GEGLU width)", int64_t{1});
  cols.default_value = int64_t{64};
  cols.static_bounds = {1, kMaxCols};
  cols.depends_on = {"buffer_bytes"};
  cols.draw = [](const DrawContext& ctx) {
    const int64_t most = ctx.space.limit(schema(), "max_cols");
    std::vector<IntOption> options{
        IntOption::any_of(20, {2, 3, 5, 7, 11, 13, 17, 31, 61, 127}),
        IntOption::range(35, 1, most), IntOption::just(10, 1)};
    const auto edges = column_edges(ctx.so_far, 4 * most);
    if (!edges.empty()) options.push_back(IntOption::any_of(35, edges));
    return options;
  };

  ParamSpec batch = param_spec("batch", ParamType::integer,
                               "leading batch dim: a is [batch, rows, cols]; 1: [rows, cols]",
                               int64_t{1});
  batch.static_bounds = {1, kMaxBatch};
  batch.draw = [](const DrawContext&) {
    return std::vector<IntOption>{IntOption::just(60, 1), IntOption::range(40, 2, 4)};
  };

  ParamSpec rows = param_spec("rows", ParamType::integer, "rows of a and b (per batch entry)",
                              int64_t{1});
  rows.default_value = int64_t{4};
  rows.static_bounds = {1, kMaxRows};
  rows.depends_on = {"buffer_bytes", "cols", "batch"};
  rows.draw = [](const DrawContext& ctx) {
    const int64_t most = ctx.space.limit(schema(), "max_rows");
    std::vector<IntOption> options{IntOption::just(25, 1), IntOption::range(45, 1, most)};
    const auto edges = row_edges(ctx.so_far, 4 * most);
    if (!edges.empty()) options.push_back(IntOption::any_of(30, edges));
    return options;
  };

  ParamSpec layout = choice_param("layout",
                                 "contiguous a and b, or fused: the two halves of one "
                                 "[..., 2·cols] projection, as fused MLPs hand them over",
                                 {"contiguous", "fused"}, {60, 40});

  ParamSpec scale = param_spec("scale", ParamType::integer,
                               "a and b are the distribution's values times scale; 45 ~ "
                               "sqrt(2048): the unscaled seed's gate and up activations",
                               int64_t{1});
  scale.static_bounds = {1, 64};
  scale.draw = [](const DrawContext&) {
    return std::vector<IntOption>{IntOption::just(50, 1), IntOption::any_of(30, {2, 4, 8, 16}),
                                  IntOption::just(20, 45)};
  };

  s.params = {budget, cores, cols, batch, rows, layout, scale};
  s.size_check = size_problems;
  // Fewer elements first, then the layout and the magnitudes, then the hardware.
  s.shrink_order = {"rows", "batch", "cols", "layout", "scale", "num_cores", "buffer_bytes"};
  return s;
}

}  // namespace

const Schema& schema() {
  static const Schema s = make_schema();
  return s;
}

}  // namespace kprop::geglu
