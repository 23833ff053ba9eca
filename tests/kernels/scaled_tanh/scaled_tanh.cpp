// scaled_tanh: y = tanh(x) s (+ b), element-wise, only to test kprop. Its toy computes in fp32
// (float64 for float64) with autograd's backward; toy@tail and toy@bias are planted defects.
#include "harness/spec/kernel_spec.h"

namespace kprop::scaled_tanh {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr int64_t kWidth = 8, kMax = 4096;
constexpr int kTanh = 4;  // tanh and tanhf are within 2 ulp: four roundings' worth
enum Variant { correct, tail_mask_typo, bias_twice };
T acc(const T& t) { return t.to(t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat); }

OpFunction toy(Variant v) {  // a row in 8-wide blocks, then the rest's lanes from a table
  return [v](const OpArgs& a) {
    const int64_t cols = a["x"].size(1), rest = cols % kWidth;
    const T written = at::arange(cols) < cols - int64_t(v == tail_mask_typo && rest == 7);  // 0x3F
    T y = acc(a["x"]).tanh() * acc(a["s"]);
    if (a["b"].defined()) y = y + acc(a["b"]);
    if (a["b"].defined() && v == bias_twice) y = y + acc(a["b"]) * (at::arange(cols) < cols - rest);
    return NamedTensors{{"y", at::where(written, y, 0.0).to(a["x"].scalar_type())}};
  };
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("scaled_tanh");
  k.params = {extent("rows", "rows of x and s", kMax, {"max_rows", 8}).by_default(int64_t{4}),
              extent("cols", "columns of x and s: 8-wide blocks, then the rest", kMax,
                     {"max_cols", 64}).in_blocks_of(kWidth).by_default(int64_t{16}),
              flag_param("bias", "a bias b [cols] added to every row").by_default(true)};
  k.properties = {"gradient", "vs_reference", "chunked", "packed", "cores", "layout",  // 3 skip
                  "determinism", "guard", "neutral",
                  "composition"};
  k.inputs = {{"x", {"rows", "cols"}}, {"s", {"rows", "cols"}},
              TensorSpec("b", {"cols"}).when_flag("bias").neutral(0.0)};
  k.outputs = {{"y", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    const T y = a["x"].tanh() * a["s"];
    return NamedTensors{{"y", a["b"].defined() ? y + a["b"] : y}};
  };
  // y = fl(fl(t s) + b); dx = fl(fl(dy s) q), where q = fl(1 - fl(t t)) keeps no relative
  // accuracy as tanh saturates, but |q - (1 - tanh^2)| <= (2 kTanh + 1) u as t^2 + q = 1.
  k.bounds = {{"y", Bound::elementwise(kTanh + 2, [](E e) {
                 return (e["x"].tanh() * e["s"]).abs() + e.or_zero("b").abs(); })},
              {"dx", Bound::elementwise(2 * kTanh + 3, [](E e) { return (e["dy"] * e["s"]).abs(); })},
              {"ds", Bound::elementwise(kTanh + 1)},  // |dy tanh(x)|: the exact result's size
              {"db", Bound::sum_over("rows", [](E e) { return e["dy"].abs().sum(0); })}};
  k.regions = {RegionRule::blocks("cols", kWidth, "column")};
  k.reordered_by_layout = {"db"};  // ATen sums dy over rows in an order that follows its strides
  k.implementations = {{"toy", "8-wide blocks and a masked remainder, fp32 math", toy(correct)},
      {"toy@tail", "planted: the remainder mask for 7 columns drops a lane", toy(tail_mask_typo)},
      ImplementationSpec("toy@bias", "planted: the block step adds the bias twice", toy(bias_twice))
          .backward_by_autograd_of(toy(correct))};  // its backward kernel has no such epilogue
  k.known_defects = {defect("remainder mask typo").in({"toy@tail"}).hunted_by("vs_reference")
          .shows("y [last column]").when("rows=1 cols=7 bias=false").first_found_by_kprop()
          .because("the mask for 7 columns is 0x3F, not 0x7F: a row's last column is never written"),
      defect("bias added twice").in({"toy@bias"}).hunted_by("vs_reference")
          .shows("y [8-wide blocks]").when("rows=1 cols=8 bias=true").first_found_by_kprop()
          .because("the block step adds the bias, then its fused epilogue again: y = tanh(x) s + 2b")};
  return k;
}());
}  // namespace
}  // namespace kprop::scaled_tanh
