// The schema of scaled_tanh cases. Column counts lean on the edges of the kernel's 8-wide
// vector blocks (columns.h) — 7, 8, 9, 15, 16, 17, 31, 32, 33 — where the block loop and
// the masked remainder meet; and they shrink along those blocks, so a failure that needs
// a certain remainder keeps it while whole blocks go.
#include "tests/kernels/scaled_tanh/schema.h"

#include <algorithm>

#include "tests/kernels/scaled_tanh/columns.h"

namespace kprop::scaled_tanh {

namespace {

constexpr int64_t kMaxRows = 4096, kMaxCols = 4096;

// Toward one column: the remainder alone (every whole block dropped), one block fewer,
// then the schema's usual line — halfway points toward 1, then one less (written out
// here: generators/shrink.cpp keeps its towards() to itself). The usual line alone
// leaves a failure at 15 columns (1, 8, 12 and 14 all lose the remainder of 7).
std::vector<int64_t> fewer_columns(int64_t cols) {
  std::vector<int64_t> out;
  auto offer = [&](int64_t c) {
    if (c >= 1 && c < cols && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  };
  offer(1);
  offer(cols % kVectorWidth);
  offer(cols - kVectorWidth);
  for (int64_t diff = (cols - 1) / 2; diff != 0; diff /= 2) offer(cols - diff);
  offer(cols - 1);
  return out;
}

Schema make_schema() {
  Schema s;
  s.kernel = "scaled_tanh";
  s.limits = {
      {"max_rows", 8, 1, kMaxRows, "most rows a case draws"},
      {"max_cols", 64, 1, kMaxCols, "most columns of a uniform draw (block edges aside)"},
  };

  ParamSpec rows = param_spec("rows", ParamType::integer, "rows of x and s", int64_t{1});
  rows.default_value = int64_t{4};
  rows.static_bounds = {1, kMaxRows};
  rows.draw = [](const DrawContext& ctx) {
    const int64_t most = ctx.space.limit(schema(), "max_rows");
    return std::vector<IntOption>{IntOption::just(30, 1), IntOption::just(15, 2),
                                  IntOption::range(55, 1, most)};
  };

  ParamSpec cols = param_spec("cols", ParamType::integer,
                              "columns of x and s: 8-wide blocks, then the rest", int64_t{1});
  cols.default_value = int64_t{16};
  cols.static_bounds = {1, kMaxCols};
  cols.draw = [](const DrawContext& ctx) {
    const int64_t most = ctx.space.limit(schema(), "max_cols");
    return std::vector<IntOption>{
        IntOption::any_of(50, {7, 8, 9, 15, 16, 17, 31, 32, 33}),
        IntOption::range(40, 1, most),
        IntOption::just(10, 1),
    };
  };
  cols.shrinks = [](int64_t x, const Case&, size_t) { return fewer_columns(x); };

  ParamSpec bias = param_spec("bias", ParamType::flag, "a bias b [cols] added to every row", false);
  bias.percent_true = 50;
  bias.default_value = true;

  s.params = {rows, cols, bias};
  return s;
}

}  // namespace

const Schema& schema() {
  static const Schema s = make_schema();
  return s;
}

}  // namespace kprop::scaled_tanh
