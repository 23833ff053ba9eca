// swiglu: c = silu(a) · b, element-wise over a, b [rows, cols], the gate of Llama's MLP.
// `rows` emulates a row kernel as Liger-Kernel's (ops/swiglu.py) computes it: silu(a) in
// fp32, rounded to b's dtype, times b; the backward in fp32 from the rounded inputs. The
// planted variant is a code path such a kernel has had, never an injected number.
#include "harness/model/host_values.h"
#include "harness/spec/kernel_spec.h"

namespace kprop::swiglu {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr int64_t kMax = int64_t{1} << 16;
constexpr int kSigmoid = 4;  // exp, add and divide: four roundings' worth
enum Variant { correct, silu_term_dropped };

T acc(const T& t) { return in_accumulation_type(t); }

OpFunction forward() {
  return [](const OpArgs& a) {
    const at::ScalarType dtype = a["b"].scalar_type();
    const T silu = acc(a["a"]) * acc(a["a"]).sigmoid();
    const T c = silu.to(dtype).to(silu.scalar_type()) * acc(a["b"]);
    return NamedTensors{{"c", c.to(dtype)}};
  };
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const T x = acc(a["a"]), b = acc(a["b"]), dc = acc(a["dc"]);
    const T sig = x.sigmoid(), silu = x * sig;
    // d silu / da = sig + silu (1 - sig); the variant keeps only sig.
    const T dsilu = v == silu_term_dropped ? sig : sig + silu * (1 - sig);
    return NamedTensors{{"da", (dc * dsilu * b).to(a["a"].scalar_type())},
                        {"db", (dc * silu).to(a["b"].scalar_type())}};
  };
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("swiglu");
  // One short of, on and one past the row kernel's blocks.
  const std::vector<int64_t> col_edges = around({64, 128, 1024, 4096});
  k.params = {extent("rows", "rows of a and b (tokens)", kMax, {"max_rows", 8}).by_default(int64_t{4}),
              extent("cols", "the intermediate size", kMax, {"max_cols", 64})
                  .by_default(int64_t{16})
                  .drawn(std::vector<IntOption>{IntOption::just(15, 1), IntOption::any_of(35, col_edges),
                                                IntOption::up_to(50, 1, "max_cols")})};
  k.inputs = {{"a", {"rows", "cols"}}, {"b", {"rows", "cols"}}};
  k.outputs = {{"c", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    return NamedTensors{{"c", a["a"] * a["a"].sigmoid() * a["b"]}};
  };
  // c: sigmoid, silu, then silu rounded to b's dtype (a partial in the output dtype) and
  // the product. da = dc b (sig + silu (1 - sig)) cancels near a = -1.28: its magnitude is
  // |dc b| (sig + |silu|). db = dc silu.
  const auto once = [](const Case&) { return int64_t{kSigmoid + 2}; };
  k.bounds = {{"c", Bound::sum_of(once, {}, 1)},
              {"da", Bound::elementwise(kSigmoid + 6, [](E e) {
                 // 1 - sig is computed from a rounded sig: its error is sig's, however
                 // small 1 - sig is, so silu (1 - sig) errs by |silu| ulps.
                 const T sig = e["a"].sigmoid();
                 return (e["dc"] * e["b"]).abs() * (sig + (e["a"] * sig).abs());
               })},
              {"db", Bound::elementwise(kSigmoid + 2)}};
  k.oracle_runs_on_any_device = true;  // ATen alone: reference, magnitudes
  k.implementations = {
      {"rows", "one row at a time: silu in fp32 rounded to b's dtype, times b", forward(),
       backward(correct)},
      {"rows@dsilu", "planted: the backward takes sigmoid(a) for silu's derivative", forward(),
       backward(silu_term_dropped)}};
  k.known_defects = {
      defect("silu's derivative without its second term").in({"rows@dsilu"})
          .hunted_by("vs_reference").shows("da").when("rows=1 cols=1").first_found_by_kprop()
          .because("d silu / da is sigmoid(a) + silu(a) (1 - sigmoid(a)); the backward keeps "
                   "only the first term")};
  return k;
}());
}  // namespace
}  // namespace kprop::swiglu
