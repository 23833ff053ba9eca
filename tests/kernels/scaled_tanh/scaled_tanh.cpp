// scaled_tanh: y = tanh(x) s (+ b), element-wise; it exists only to test kprop. Its toy
// implementation writes a row in whole 8-wide blocks, then one masked step whose lanes
// come from a table, in fp32 (float64 for float64). Planted defects, code paths of that
// loop: toy@tail (the table's entry for 7 columns is 0x3F) and toy@bias (the block step's
// fused epilogue adds the bias again).
#include "generators/shrink.h"
#include "harness/spec/kernel_spec.h"

namespace kprop::scaled_tanh {
namespace {

constexpr int64_t kWidth = 8, kMax = 4096;
constexpr int kTanh = 4;  // tanh and tanhf are within 2 ulp: four roundings' worth
enum Variant { correct, tail_mask_typo, bias_twice };
using T = at::Tensor;

std::string column_region(const Case& c, int64_t col) {
  const int64_t cols = c.integer("cols");
  if (col < cols - cols % kWidth) return "8-wide blocks";
  return col == cols - 1 ? "last column" : "remainder";
}

T lanes(int64_t cols, Variant v, bool blocks_only = false) {  // the columns a step writes
  const int64_t blocks = cols - cols % kWidth, rest = cols - blocks;
  const int64_t mask = blocks_only ? 0 : v == tail_mask_typo && rest == 7 ? 0x3F : (1 << rest) - 1;
  T on = at::arange(cols) < blocks;
  for (int64_t lane = 0; lane < rest; ++lane) on[blocks + lane] = bool((mask >> lane) & 1);
  return on;
}

T acc(const T& t) { return t.to(t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat); }

template <Variant V>
NamedTensors toy_fwd(const OpArgs& a) {
  T y = acc(a["x"]).tanh() * acc(a["s"]);
  if (a["b"].defined()) y = y + acc(a["b"]);
  if (a["b"].defined() && V == bias_twice)
    y = at::where(lanes(y.size(1), V, true), y + acc(a["b"]), y);
  return {{"y", at::where(lanes(y.size(1), V), y, at::zeros_like(y)).to(a["x"].scalar_type())}};
}

template <Variant V>
NamedTensors toy_bwd(const OpArgs& a) {
  const T t = acc(a["x"]).tanh();
  const T dy = at::where(lanes(t.size(1), V), acc(a["dy"]), at::zeros_like(t));
  const auto dtype = a["x"].scalar_type();
  NamedTensors g{{"dx", (dy * acc(a["s"]) * (1 - t * t)).to(dtype)}, {"ds", (dy * t).to(dtype)}};
  if (a["b"].defined()) g.set("db", dy.sum(0).to(dtype));  // summed in fp32, rounded once
  return g;
}

KernelSpec spec() {
  KernelSpec k;
  k.name = "scaled_tanh";
  k.limits = {{"max_rows", 8, 1, kMax, "most rows a case draws"},
              {"max_cols", 64, 1, kMax, "most columns of a uniform draw (block edges aside)"}};
  k.params = {
      param_spec("rows", ParamType::integer, "rows of x and s", int64_t{1})
          .by_default(int64_t{4}).within(1, kMax)
          .drawn({IntOption::just(30, 1), IntOption::just(15, 2),
                  IntOption::up_to(55, 1, "max_rows")}),
      param_spec("cols", ParamType::integer, "columns of x and s: 8-wide blocks, then the rest",
                 int64_t{1})
          .by_default(int64_t{16}).within(1, kMax).shrinking(along_blocks(kWidth))
          .drawn({IntOption::any_of(50, {7, 8, 9, 15, 16, 17, 31, 32, 33}),
                  IntOption::up_to(40, 1, "max_cols"), IntOption::just(10, 1)}),
      param_spec("bias", ParamType::flag, "a bias b [cols] added to every row", false)
          .by_default(true)};
  // All five: the three it cannot take part in must say so (skipped), not fail or crash.
  k.properties = {"gradient", "vs_reference", "chunked", "packed", "cores"};
  k.dims = {param_dim("rows"), param_dim("cols")};
  k.inputs = {{"x", {"rows", "cols"}}, {"s", {"rows", "cols"}},
              TensorSpec("b", {"cols"}).when_flag("bias")};
  k.outputs = {{"y", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    const T y = a["x"].tanh() * a["s"];
    return NamedTensors{{"y", a["b"].defined() ? y + a["b"] : y}};
  };
  // y = fl(fl(t s) + b); dx = fl(fl(dy s) q), where q = fl(1 - fl(t t)) keeps no relative
  // accuracy as tanh saturates, but |q - (1 - tanh^2)| <= (2 kTanh + 1) u as t^2 + q = 1.
  k.bounds = {
      {"y", Bound::elementwise(kTanh + 2, [](const Exact& e) {
         const T m = (e["x"].tanh() * e["s"]).abs();
         return e["b"].defined() ? m + e["b"].abs() : m;
       })},
      {"dx", Bound::elementwise(2 * kTanh + 3,
                                [](const Exact& e) { return (e["dy"] * e["s"]).abs(); })},
      {"ds", Bound::elementwise(kTanh + 1,
                                [](const Exact& e) { return (e["dy"] * e["x"].tanh()).abs(); })},
      {"db", Bound::sum_over("rows", [](const Exact& e) { return e["dy"].abs().sum(0); })}};
  k.regions = {{"cols", column_region}};
  k.implementations = {
      {"toy", "8-wide blocks and a masked remainder, fp32 math", toy_fwd<correct>,
       toy_bwd<correct>},
      {"toy@tail", "planted: the remainder mask for 7 columns drops a lane",
       toy_fwd<tail_mask_typo>, toy_bwd<tail_mask_typo>},
      {"toy@bias", "planted: the block step adds the bias twice", toy_fwd<bias_twice>,
       toy_bwd<bias_twice>}};
  k.default_implementation = "toy";
  k.known_defects = {
      defect("remainder mask typo").in({"toy@tail"}).hunted_by("vs_reference")
          .shows("y [last column]").first_found_by_kprop()
          .because("the remainder mask for 7 columns is 0x3F, not 0x7F: the last column of a "
                   "row of 7 mod 8 columns is never written, forward or backward")
          .when([](const Case& c) {  // one row of the remainder alone: no block, no bias
            return c.integer("rows") == 1 && c.integer("cols") == kWidth - 1 && !c.flag("bias");
          }),
      defect("bias added twice").in({"toy@bias"}).hunted_by("vs_reference")
          .shows("y [8-wide blocks]").first_found_by_kprop()
          .because("the block step adds the bias, then its fused epilogue adds it again: "
                   "y = tanh(x) s + 2b in every whole 8-wide block, right in the remainder")
          .when([](const Case& c) {  // one row of exactly one block, with the bias
            return c.integer("rows") == 1 && c.integer("cols") == kWidth && c.flag("bias");
          })};
  return k;
}

const bool registered = register_builtin_spec(spec());

}  // namespace
}  // namespace kprop::scaled_tanh
