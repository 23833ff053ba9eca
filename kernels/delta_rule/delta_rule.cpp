// delta_rule: flash-linear-attention's delta rule and gated delta rule (ops/delta_rule,
// ops/gated_delta_rule: chunk_* and fused_recurrent_*), over q, k [batch, seq, heads,
// k_dim], v [batch, seq, value_heads, v_dim] and per-token beta (and, gated, g) [batch,
// seq, value_heads], time-first as fla takes them. Value head h reads key head h / groups
// (fla's GVA). Per value head, a state S [k_dim, v_dim] starts at h0 (zero without one) and
// at each token t
//   S <- exp(g_t) S                      (gated only; g is a log decay)
//   u  = beta_t (v_t - S^T k_t)          (the delta: what S predicts for k_t, corrected)
//   S <- S + k_t u^T,   o_t = S^T (scale q_t)
// and ht is the last S. With `l2norm` (use_qk_l2norm_in_kernel) q and k are divided by
// sqrt(sum x^2 + 1e-6) first, as fla's l2norm does.
// The reference is that recurrence, token by token, in float64. `recurrent` emulates
// fused_recurrent (the state in fp32, one token at a time); the planted variant is a state
// fla had. A packed case (cu_seqlens) runs them on each sequence, as fla's varlen kernels
// restart their states at each sequence's start.
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <utility>

#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "harness/spec/kernel_spec.h"
#include "harness/spec/token_sequences.h"
#include "kernels/common/fla_recurrent_params.h"

namespace kprop::delta_rule {
namespace {
using namespace fla_recurrent;
using T = at::Tensor;
using E = const Exact&;
constexpr double kNormEps = 1e-6;  // fla's l2norm
enum Variant { correct, no_delta_without_gate };

using Rounding = std::function<T(const T&)>;
T exact(const T& t) { return t; }

T l2norm(const T& x, const Rounding& rd = exact) {
  return rd(x / rd(rd(rd(x * x).sum(-1, true) + kNormEps).sqrt()));
}

// What one call computes: its tensors (float64 for the reference, fp32 for an emulation)
// and `rd`, applied to every op's result: exact, or a rounding to the case's dtype, as
// torch's ops on tensors of that dtype store their results (the framework rule).
struct Call {
  T q, k, v, beta, g, h0;
  double scale;
  int64_t groups;
  bool l2norm;
  Rounding rd = exact;
};

Call call_of(const OpArgs& a, const std::function<T(const T&)>& as) {
  const auto opt = [&](const char* name) { return a[name].defined() ? as(a[name]) : T(); };
  return Call{as(a["q"]), as(a["k"]), as(a["v"]), as(a["beta"]), opt("g"), opt("h0"),
              scale_of(a.text("scale"), a["q"].size(3)), a.integer("groups"), a.flag("l2norm")};
}

// The recurrence token by token. Returns o [batch, seq, value_heads, v_dim] and the last S.
// Variant no_delta_without_gate: without g, S <- S + k v^T (no beta, no delta), as fla's
// fused_recurrent_gated_delta_rule did at d1fc1c54 (#589), whose delta step sat inside
// `if USE_G` / `if USE_GK` (f636f5a1 fixes it).
// q (l2-normalised where asked, scaled) and k, per value head: key heads repeated for their
// value heads, head h of v reading head h / groups of q and k.
std::pair<T, T> per_value_head(const Call& x) {
  const Rounding& rd = x.rd;
  const T q = x.l2norm ? l2norm(x.q, rd) : x.q, k = x.l2norm ? l2norm(x.k, rd) : x.k;
  return {rd(q.repeat_interleave(x.groups, 2) * x.scale), k.repeat_interleave(x.groups, 2)};
}

// `states`, where given, receives S_0 .. S_T (the state before the first token and after
// each).
std::pair<T, T> recurrence(const Call& x, Variant variant = correct, std::vector<T>* states = nullptr) {
  const Rounding& rd = x.rd;
  const auto [q, k] = per_value_head(x);
  T S = x.h0.defined() ? x.h0
                       : at::zeros({q.size(0), q.size(2), q.size(3), x.v.size(3)}, x.v.options());
  if (states) states->push_back(S);
  std::vector<T> o;
  for (int64_t t = 0; t < q.size(1); ++t) {
    const T kt = k.select(1, t), vt = x.v.select(1, t);  // [batch, value_heads, dim]
    if (x.g.defined()) S = rd(S * rd(x.g.select(1, t).exp()).unsqueeze(-1).unsqueeze(-1));
    // A sum over k_dim is one op (fp32 accumulation inside, one rounding at its end).
    const T u = variant == no_delta_without_gate && !x.g.defined()
                    ? vt
                    : rd(x.beta.select(1, t).unsqueeze(-1) *
                         rd(vt - rd((S * kt.unsqueeze(-1)).sum(-2))));
    S = rd(S + rd(kt.unsqueeze(-1) * u.unsqueeze(-2)));
    if (states) states->push_back(S);
    o.push_back(rd((S * q.select(1, t).unsqueeze(-1)).sum(-2)));
  }
  return {at::stack(o, 1), S};
}

NamedTensors results(const OpArgs& a, const T& o, const T& S) {
  return NamedTensors{{"o", o}, {"ht", a.flag("final_state") ? S : T()}};
}

NamedTensors reference(const OpArgs& a) {
  const auto [o, S] = recurrence(call_of(a, [](const T& t) { return t; }));
  return results(a, o, S);
}

// fused_recurrent: one token at a time, everything in fp32 (float64 for float64 cases); o
// stored in v's dtype, ht in fp32. A Python float scale is an fp32 scalar in the kernel.
OpFunction recurrent(Variant v) {
  return [v](const OpArgs& a) {
    const at::ScalarType dtype = a["v"].scalar_type();
    const bool f64 = dtype == at::kDouble;
    Call x = call_of(a, [f64](const T& t) { return t.to(f64 ? at::kDouble : at::kFloat); });
    if (!f64) x.scale = static_cast<float>(x.scale);
    const auto [o, S] = recurrence(x, v);
    return results(a, o.to(dtype), S);
  };
}

// fla's tests draw beta = sigmoid(x), g = logsigmoid(x) (divided by a normaliser: `strong`
// gates, 10 logsigmoid(x), forget within a few tokens) and, without the in-kernel l2norm,
// q and k already normalised: the delta rule is a contraction only while beta |k|^2 <= 2.
void fla_distributions(const Case& c, NamedTensors& in) {
  // In float64, then stored in the dtype (torch has no half sigmoid on the CPU).
  const auto set = [&](const char* name, const std::function<T(const T&)>& f) {
    const T x = in.get(name);
    in.set(name, f(x.to(at::kDouble)).to(x.scalar_type()));
  };
  set("beta", [](const T& x) { return at::sigmoid(x); });
  if (in.has("g"))
    set("g", [&c](const T& x) { return at::log_sigmoid(x) * (c.choice("gate") == "strong" ? 10.0 : 1.0); });
  // With the in-kernel l2norm, rows of (near) zero norm are moved off it: there l2norm's
  // slope is 1 / sqrt(eps) = 1000 and its curvature beyond what finite differences (the
  // `gradient` property) can follow. fla's tests never draw them.
  for (const char* name : {"q", "k"})
    set(name, [&c](const T& x) {
      return c.flag("l2norm") ? x + 0.1 * (x.norm(2, -1, true) < 0.1).to(x.scalar_type()) : l2norm(x);
    });
}

// The framework-reference rule (docs/design.md §5): the recurrence's error cannot be bounded
// element by element from |terms| (|I - beta k k^T| has norm up to 1 + beta |k|^2, so the
// magnitudes grow like 2^seq, while the error itself does not: the map contracts). So an
// implementation may be no worse than twice the distance from float64 of the same
// recurrence run by torch in the case's dtype, every op rounding to it, its gradients by
// autograd in that dtype: per result, twice its largest error.
NamedTensors framework_distances(E e) {
  at::AutoGradMode grad_mode(true);
  // Computed in fp32, each op's result rounded to the dtype; through `to`, autograd rounds
  // the gradients the same way. A float64 case has no lower framework to measure: its
  // distance is fp32's scaled by the ratio of the unit roundoffs (the same computation's
  // error is proportional to u).
  const at::ScalarType case_dtype = scalar_type(e.c.dtype);
  const at::ScalarType dtype = case_dtype == at::kDouble ? at::kFloat : case_dtype;
  const double per_u = unit_roundoff(case_dtype) / unit_roundoff(dtype);
  const Rounding rd = [dtype](const T& t) { return t.to(dtype).to(at::kFloat); };
  std::vector<std::string> names{"q", "k", "v", "beta", "g", "h0"};
  std::map<std::string, T> low;
  std::vector<T> leaves;
  std::vector<std::string> leaf_names;
  for (const auto& n : names) {
    const T t = e[n];
    if (!t.defined()) continue;
    low[n] = rd(t).detach().requires_grad_();
    leaves.push_back(low[n]);
    leaf_names.push_back(n);
  }
  const auto get = [&](const std::string& n) { return low.count(n) ? low[n] : T(); };
  const Call x{get("q"), get("k"), get("v"), get("beta"), get("g"), get("h0"),
               scale_of(e.c.choice("scale"), e["q"].size(3)), e.c.integer("groups"), e.c.flag("l2norm"), rd};
  const auto [o, S] = recurrence(x);
  std::vector<T> ys{o}, cots{rd(e["do"])};
  if (e.c.flag("final_state")) {
    ys.push_back(S);
    cots.push_back(rd(e["dht"]));
  }
  const auto g = torch::autograd::grad(ys, leaves, cots, false, false, /*allow_unused=*/true);
  // Per result, the framework's largest error. Where the framework itself overflowed (no
  // finite distance to measure), the result's bound is its last step's alone.
  std::vector<std::pair<std::string, T>> low_results{{"o", o}, {"ht", S}};
  for (size_t i = 0; i < leaf_names.size(); ++i) low_results.push_back({"d" + leaf_names[i], g[i]});
  NamedTensors d;
  for (const auto& [name, low_result] : low_results) {
    const T exact = e[name];
    if (!low_result.defined() || !exact.defined() || exact.numel() == 0) continue;
    const double error = (low_result.detach().to(at::kDouble) - exact).abs().max().item<double>();
    d.set(name, at::full_like(exact, std::isfinite(error) ? per_u * error : 0.0));
  }
  return d;
}


// |J|^T |y| for J the Jacobian of l2norm at x: (|y| + |x^| (|x^| . |y|)) / sqrt(|x|^2 + eps).
T through_l2norm(const T& y, const T& x) {
  const T norm = (x * x).sum(-1, true).add(kNormEps).sqrt(), unit = (x / norm).abs();
  return (y + unit * (unit * y).sum(-1, true)) / norm;
}

// Each result's last step on exact values: for every token at once, the step from
// |the exact state before it| with |q, k, v, beta| and exp(g), its output and new state
// taking |do| and |the exact adjoint of the new state| as cotangents, gradients by autograd.
// What the roundings of the step that forms each result are proportional to (the error the
// state carries into it is the framework rule's).
NamedTensors last_step_magnitudes(E e) {
  at::AutoGradMode grad_mode(true);
  const Case& c = e.c;
  const int64_t groups = c.integer("groups");
  const double scale = scale_of(c.choice("scale"), e["q"].size(3));
  const bool gated = e["g"].defined();
  const T v = e["v"], beta = e["beta"];
  // The exact states S_0 .. S_T as nodes (S_0 a leaf, so that there is a graph), and the
  // adjoints of S_1 .. S_T by autograd.
  const T h0 = (e["h0"].defined() ? e["h0"]
                                  : at::zeros({v.size(0), v.size(2), e["q"].size(3), v.size(3)}, v.options()))
                   .clone()
                   .requires_grad_();
  const Call exact_call{e["q"], e["k"], v, beta, e["g"], h0, scale, groups, c.flag("l2norm")};
  const auto [q, k] = per_value_head(exact_call);
  std::vector<T> states;
  const auto [o, S] = recurrence(exact_call, correct, &states);
  T loss = (o * e["do"]).sum();
  if (c.flag("final_state")) loss = loss + (S * e["dht"]).sum();
  const std::vector<T> after(states.begin() + 1, states.end());
  const auto adjoints = torch::autograd::grad({loss}, after, {}, false, false, /*allow_unused=*/true);
  // What S_t carries on beyond o_t (whose own cotangent |do_t| the step below takes): the
  // adjoint less q_t do_t^T, so that o_t's part is not counted twice.
  std::vector<T> adjoint;
  for (size_t i = 0; i < adjoints.size(); ++i) {
    const T own = q.select(1, i).unsqueeze(-1) * e["do"].select(1, i).unsqueeze(-2);
    adjoint.push_back(adjoints[i].defined() ? (adjoints[i] - own).abs() : at::zeros_like(after[i]));
  }

  // The step, on magnitudes, every token at once: [batch, seq, value_heads, ...].
  const auto leaf = [](const T& t) { return t.abs().detach().requires_grad_(); };
  const T before = leaf(at::stack(std::vector<T>(states.begin(), states.end() - 1), 1));
  const T qa = leaf(q), ka = leaf(k), va = leaf(v), ba = leaf(beta);
  const T decay = gated ? leaf(e["g"].exp()) : T();
  const T decayed = gated ? before * decay.unsqueeze(-1).unsqueeze(-1) : before;
  const T ua = ba.unsqueeze(-1) * (va + (decayed * ka.unsqueeze(-1)).sum(-2));
  const T state = decayed + ka.unsqueeze(-1) * ua.unsqueeze(-2);
  const T oa = (state * qa.unsqueeze(-1)).sum(-2);
  std::vector<T> wrt{qa, ka, va, ba, before};
  if (gated) wrt.push_back(decay);
  const auto g = torch::autograd::grad({oa, state}, wrt, {e["do"].abs(), at::stack(adjoint, 1)});
  // Back to the key heads (a key head's gradient sums its value heads) and through l2norm.
  const auto per_key_head = [&](const T& t, double factor, const T& x) {
    T y = t.unflatten(2, {t.size(2) / groups, groups}).sum(3) * factor;
    return c.flag("l2norm") ? through_l2norm(y, x) : y;
  };
  NamedTensors m{{"o", oa.detach()},
                 {"ht", state.select(1, state.size(1) - 1).detach()},
                 {"dq", per_key_head(g[0], scale, e["q"])},
                 {"dk", per_key_head(g[1], 1.0, e["k"])},
                 {"dv", g[2]},
                 {"dbeta", g[3]},
                 {"dh0", g[4].select(1, 0)}};
  if (gated) m.set("dg", g[5] * decay.detach());
  return m;
}

// The last step's sums: over k_dim (S^T k, S^T q) and v_dim (a key's gradient), a few
// products around them.
int64_t step_terms(const Case& c) { return c.integer("k_dim") + c.integer("v_dim") + 8; }

const bool registered = register_builtin_spec([] {
  KernelSpec k("delta_rule");
  const std::vector<IntOption> seq_draws{IntOption::just(20, 1), IntOption::up_to(60, 1, "max_seq"),
                                         IntOption::any_of(20, around({kChunk}))};
  k.params = {
      extent("batch", "sequences, each of `seq` tokens", 64, {"max_batch", 2}).by_default(int64_t{1}),
      extent("seq", "tokens per sequence", 4096, {"max_seq", 12})
          .by_default(int64_t{4})
          .drawn(seq_draws),
      extent("heads", "key heads (q and k)", 64, {"max_heads", 2}).by_default(int64_t{1}),
      param_spec("groups", ParamType::integer, "value heads per key head (GVA: value_heads = heads x groups)",
                 int64_t{1})
          .within(1, 8)
          .drawn(std::vector<IntOption>{IntOption::just(80, 1), IntOption::any_of(20, {2})}),
      head_size("k_dim", "the key and query head size"),
      head_size("v_dim", "the value head size"),
      scale_param(),
      flag_param("gated", "the gated delta rule: S decays by exp(g_t) before each token").true_in_percent(50),
      choice_param("gate", "g's draw: logsigmoid(x), or 10 logsigmoid(x) (strongly negative)",
                   {"logsigmoid", "strong"}, {70, 30}),
      flag_param("l2norm", "q and k l2-normalised by the kernel (use_qk_l2norm_in_kernel)").true_in_percent(40),
      flag_param("initial_state", "an initial state h0 [sequences, value_heads, k_dim, v_dim]").true_in_percent(50),
      flag_param("final_state", "the final state ht returned (output_final_state)").true_in_percent(50),
      split_param()};
  k.limits = head_size_limits();
  k.dims = {Dim{"value_heads", [](const Case& c) { return c.integer("heads") * c.integer("groups"); }}};
  k.operator_params = {"scale", "groups", "l2norm", "final_state"};
  const std::vector<std::string> per_token{"batch", "seq", "value_heads"};
  const std::vector<std::string> state{"sequences", "value_heads", "k_dim", "v_dim"};
  k.inputs = {{"q", {"batch", "seq", "heads", "k_dim"}},
              {"k", {"batch", "seq", "heads", "k_dim"}},
              {"v", {"batch", "seq", "value_heads", "v_dim"}},
              {"beta", per_token},
              TensorSpec("g", per_token).when_flag("gated").neutral(0),
              TensorSpec("h0", state).when_flag("initial_state").neutral(0)};
  k.outputs = {{"o", {"batch", "seq", "value_heads", "v_dim"}},
               TensorSpec("ht", state).when_flag("final_state")};
  k.relate_inputs = fla_distributions;
  k.properties.push_back("chunked");
  k.properties.push_back("packed");
  TokenSequences sequences{"batch", "seq", {{"h0", "ht"}}, "initial_state", "final_state", "split"};
  packed_layout(k, sequences, seq_draws);
  // fla's chunk and fused_recurrent forms, where an adapter declares the pair.
  k.properties.push_back("algorithms");
  k.sequences = token_sequences(k, sequences).release();  // lives as long as the program
  const auto each_sequence = [&](OpFunction f) { return one_sequence_at_a_time(k, sequences, std::move(f)); };
  k.reference = each_sequence(reference);
  k.reference_about = "float64 recurrence, token by token (oracle)";
  const auto shared = [&](NamedTensors (*f)(E)) {
    return one_sequence_at_a_time(k, sequences, std::make_shared<const std::function<NamedTensors(E)>>(f));
  };
  const SharedMagnitudes distances = shared(framework_distances), last_step = shared(last_step_magnitudes);
  for (const char* r : {"o", "ht", "dq", "dk", "dv", "dbeta", "dg", "dh0"})
    k.bounds[r] = Bound::framework_distance(distances, r, last_step, step_terms);
  // The gradients that sum over v_dim may be summed in blocks of it, each block's partial
  // stored in the dtype before they are added: fla's fused_recurrent backward takes blocks
  // of 32 and adds its dq, dk and dbeta partials in torch. Their roundings add u |terms|.
  for (const char* r : {"dq", "dk", "dbeta"})
    k.bounds[r].partials_when([](const Case& c) { return c.integer("v_dim") > 32 ? 1 : 0; });
  // Sums over the sequence and the head sizes in an order the algorithm picks; the gated
  // and plain rules are different kernels upstream (neutral compares them).
  k.reordered_by_layout = {"o", "ht", "dq", "dk", "dv", "dbeta", "dg", "dh0"};
  k.implementations = {
      {"recurrent", "fused_recurrent_(gated_)delta_rule: one token at a time, the state in fp32",
       each_sequence(recurrent(correct))},
      {"recurrent@no_delta_without_gate",
       "planted (fla d1fc1c54, #589): without g, S += k v^T: no beta, no delta",
       each_sequence(recurrent(no_delta_without_gate))}};
  k.known_defects = {
      defect("delta step only under a gate").in({"recurrent@no_delta_without_gate"})
          .hunted_by("vs_reference").shows("o")
          .when([](const Case& c) {
            return !c.flag("gated") && c.integer("batch") == 1 && c.integer("heads") == 1 &&
                   c.integer("seq") == 1 && c.integer("k_dim") == 1 && c.integer("v_dim") == 1;
          })
          .because("fused_recurrent_gated_delta_rule computed u = beta (v - S^T k) inside "
                   "`if USE_G` and `if USE_GK` only: without gates the state took k v^T, plain "
                   "linear attention (fla d1fc1c54, #589; f636f5a1 fixes it). fla had no test "
                   "of the ungated call")};
  return k;
}());
}  // namespace
}  // namespace kprop::delta_rule
