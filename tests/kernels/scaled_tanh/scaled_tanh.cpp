// scaled_tanh: y = tanh(x) s (+ b), element-wise, only to test kprop. Its toy writes a row in
// 8-wide blocks, then one masked step whose lanes come from a table, in fp32 (float64 for
// float64). Planted on that loop's paths: toy@tail (the table's entry for 7 columns is 0x3F)
// and toy@bias (the block step's fused epilogue adds the bias again).
#include "harness/spec/kernel_spec.h"

namespace kprop::scaled_tanh {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr int64_t kWidth = 8, kMax = 4096;
constexpr int kTanh = 4;  // tanh and tanhf are within 2 ulp: four roundings' worth
enum Variant { correct, tail_mask_typo, bias_twice };

T lanes(int64_t cols, int64_t mask) {  // every whole block, then the remainder's lanes in mask
  const int64_t blocks = cols - cols % kWidth;
  T on = at::arange(cols) < blocks;
  for (int64_t lane = 0; blocks + lane < cols; ++lane) on[blocks + lane] = bool(mask >> lane & 1);
  return on;
}
T acc(const T& t) { return t.to(t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat); }

ImplementationSpec toy(std::string name, Variant v, std::string about) {
  auto written = [v](int64_t cols) {  // the columns the loop writes
    const int64_t rest = cols % kWidth;
    return lanes(cols, v == tail_mask_typo && rest == 7 ? 0x3F : (1 << rest) - 1);
  };
  auto forward = [=](const OpArgs& a) {
    T y = acc(a["x"]).tanh() * acc(a["s"]);
    if (a["b"].defined()) y = y + acc(a["b"]);
    if (a["b"].defined() && v == bias_twice) y = at::where(lanes(y.size(1), 0), y + acc(a["b"]), y);
    return NamedTensors{{"y", at::where(written(y.size(1)), y, 0.0).to(a["x"].scalar_type())}};
  };
  auto backward = [=](const OpArgs& a) {
    const T t = acc(a["x"]).tanh(), dy = at::where(written(t.size(1)), acc(a["dy"]), 0.0);
    const auto out = a["x"].scalar_type();
    NamedTensors g{{"dx", (dy * acc(a["s"]) * (1 - t * t)).to(out)}, {"ds", (dy * t).to(out)}};
    if (a["b"].defined()) g.set("db", dy.sum(0).to(out));  // summed in fp32, rounded once
    return g;
  };
  return {std::move(name), std::move(about), forward, backward};
}

KernelSpec spec() {
  KernelSpec k("scaled_tanh");
  k.params = {extent("rows", "rows of x and s", kMax, {"max_rows", 8}).by_default(int64_t{4}),
              extent("cols", "columns of x and s: 8-wide blocks, then the rest", kMax,
                     {"max_cols", 64}).in_blocks_of(kWidth).by_default(int64_t{16}),
              flag_param("bias", "a bias b [cols] added to every row").by_default(true)};
  k.properties = {"gradient", "vs_reference", "chunked", "packed", "cores"};  // 3 say skipped
  k.inputs = {{"x", {"rows", "cols"}}, {"s", {"rows", "cols"}},
              TensorSpec("b", {"cols"}).when_flag("bias")};
  k.outputs = {{"y", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    const T y = a["x"].tanh() * a["s"];
    return NamedTensors{{"y", a["b"].defined() ? y + a["b"] : y}};
  };
  // y = fl(fl(t s) + b); dx = fl(fl(dy s) q), where q = fl(1 - fl(t t)) keeps no relative
  // accuracy as tanh saturates, but |q - (1 - tanh^2)| <= (2 kTanh + 1) u as t^2 + q = 1.
  k.bounds = {{"y", Bound::elementwise(kTanh + 2, [](E e) {
                 const T m = (e["x"].tanh() * e["s"]).abs();
                 return e["b"].defined() ? m + e["b"].abs() : m; })},
              {"dx", Bound::elementwise(2 * kTanh + 3, [](E e) { return (e["dy"] * e["s"]).abs(); })},
              {"ds", Bound::elementwise(kTanh + 1, [](E e) { return (e["dy"] * e["x"].tanh()).abs(); })},
              {"db", Bound::sum_over("rows", [](E e) { return e["dy"].abs().sum(0); })}};
  k.regions = {RegionRule::blocks("cols", kWidth, "column")};
  k.implementations = {
      toy("toy", correct, "8-wide blocks and a masked remainder, fp32 math"),
      toy("toy@tail", tail_mask_typo, "planted: the remainder mask for 7 columns drops a lane"),
      toy("toy@bias", bias_twice, "planted: the block step adds the bias twice")};
  k.known_defects = {
      defect("remainder mask typo").in({"toy@tail"}).hunted_by("vs_reference")
          .shows("y [last column]").when("rows=1 cols=7 bias=false").first_found_by_kprop()
          .because("the mask for 7 columns is 0x3F, not 0x7F: a row's last column is never written"),
      defect("bias added twice").in({"toy@bias"}).hunted_by("vs_reference")
          .shows("y [8-wide blocks]").when("rows=1 cols=8 bias=true").first_found_by_kprop()
          .because("the block step adds the bias, then its fused epilogue again: y = tanh(x) s + 2b")};
  return k;
}
const bool registered = register_builtin_spec(spec());
}  // namespace
}  // namespace kprop::scaled_tanh
