// linear_attn: flash-linear-attention's linear attention with a carried state
// (ops/linear_attn: chunk_linear_attn, fused_recurrent_linear_attn), over q, k [batch,
// seq, heads, k_dim] and v [batch, seq, heads, v_dim], time-first as fla takes them. Per
// head, a state S [k_dim, v_dim] starts at h0 (zero without one) and at each token t
//   S <- S + k_t v_t^T,   o_t = S^T (scale q_t)
// and the final state ht is the last S. With `normalize`, o_t is divided by
// scale q_t . z_t + 1e-10, z_t = z0 + k_0 + ... + k_t the running sum of the keys, a second
// state (fla's normalize_with_z_state: z0 is the initial state's z_state, zt the final's).
// The reference is that recurrence, token by token, in float64: the chunked form is an
// implementation to check, never the oracle.
// `recurrent` emulates fused_recurrent (the state in fp32, one token at a time); `chunked`
// emulates chunk (chunks of 64 tokens: the state carried in fp32 but handed to each
// chunk's output stored in k's dtype, as chunk_fwd_h stores h). Their gradients are
// autograd's of the emulated forward. The planted variants are a state fla had and two
// defects of the kinds its history shows.
// A packed case (cu_seqlens) runs the reference and the emulations on each sequence, as
// fla's varlen kernels restart their chunks and states at each sequence's start.
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <utility>

#include "harness/execution/takes.h"
#include "harness/spec/kernel_spec.h"
#include "harness/spec/token_sequences.h"
#include "kernels/common/fla_recurrent_params.h"

namespace kprop::linear_attn {
namespace {
using namespace fla_recurrent;
using T = at::Tensor;
using E = const Exact&;
constexpr double kNormEps = 1e-10;  // normalize_with_z_state's
enum Variant { correct, normalizer_detached, final_state_detached };
// The state entries: one per sequence (a dense case's batch rows, a packed case's lengths).
const std::vector<std::string> kState{"sequences", "heads", "k_dim", "v_dim"};
const std::vector<std::string> kKeySum{"sequences", "heads", "k_dim"};

// fp32 (float64 for float64 cases), by a differentiable conversion: the emulations'
// gradients are autograd's.
T acc(const T& t) {
  return t.defined() ? t.to(t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat) : t;
}

// A Python float handed to a Triton kernel is an fp32 scalar there (float64 emulated as is).
double as_kernel_holds(double x, const T& like) {
  return like.scalar_type() == at::kDouble ? x : static_cast<double>(static_cast<float>(x));
}

// An op torch runs in the tensors' dtype: computed in fp32, rounded to `dtype`.
T in_dtype(const T& fp32_result, at::ScalarType dtype) { return fp32_result.to(dtype); }

// z_t = z0 + k_0 + ... + k_t: the keys summed in fp32 and stored in k's dtype
// (chunk_global_cumsum), z0 added after, in torch, in the dtype.
T key_sums(const T& k, const T& z0) {
  const at::ScalarType dtype = k.scalar_type();
  T z = in_dtype(acc(k).cumsum(1), dtype);
  if (z0.defined()) z = in_dtype(acc(z) + acc(z0).unsqueeze(1), dtype);
  return z;
}

// o [batch, seq, heads, v_dim] divided by scale q_t . z_t + eps, as fla's
// StatefulNormalizeFunction computes it in torch: each op in the dtype. Variant
// normalizer_detached: the key sum is a constant to autograd, as fla's chunk_global_cumsum
// was before #875 (a Triton call with no backward): dk misses the normaliser's term.
T normalized(const T& o, const T& q_scaled, const T& z, Variant v) {
  const at::ScalarType dtype = o.scalar_type();
  const T zz = v == normalizer_detached ? z.detach() : z;
  const T products = in_dtype(acc(q_scaled) * acc(zz), dtype);
  const T den = in_dtype(acc(in_dtype(acc(products).sum(-1, true), dtype)) + kNormEps, dtype);
  return in_dtype(acc(o) / acc(den), dtype);
}

// The final key sum, where the case returns it.
T final_key_sum(const OpArgs& a, const T& z) {
  return a.flag("normalize") && a.flag("final_state") ? z.select(1, z.size(1) - 1) : T();
}

// The state a call starts from: h0, or zeros [batch, heads, k_dim, v_dim] like q.
T initial(const T& h0, const T& q, const T& v) {
  return h0.defined() ? h0 : at::zeros({q.size(0), q.size(2), q.size(3), v.size(3)}, q.options());
}

// The recurrence token by token from state S: S += k_t v_t^T, o_t = S^T (scale q_t).
// Returns o [batch, seq, heads, v_dim] and the last S.
std::pair<T, T> recurrence(const T& q, const T& k, const T& v, T S, double scale) {
  std::vector<T> o;
  for (int64_t t = 0; t < q.size(1); ++t) {
    S = S + k.select(1, t).unsqueeze(-1) * v.select(1, t).unsqueeze(-2);
    o.push_back((q.select(1, t).unsqueeze(-1) * scale * S).sum(-2));
  }
  return {at::stack(o, 1), S};
}

// An emulation's results from its fp32 o and final state: o rounded to q's dtype, then
// normalize_with_z_state in torch, in the dtype; ht in fp32.
NamedTensors emulated(const OpArgs& a, const T& o_fp32, const T& ht, double scale, Variant v) {
  const at::ScalarType dtype = a["q"].scalar_type();
  T out = o_fp32.to(dtype), z;
  if (a.flag("normalize")) {
    z = key_sums(a["k"], a["z0"]);
    out = normalized(out, in_dtype(acc(a["q"]) * scale, dtype), z, v);
  }
  return NamedTensors{{"o", out}, {"ht", a.flag("final_state") ? ht : T()}, {"zt", final_key_sum(a, z)}};
}

// The float64 oracle: the recurrence, token by token.
NamedTensors reference(const OpArgs& a) {
  const T q = a["q"], k = a["k"], v = a["v"];
  const double scale = scale_of(a.text("scale"), q.size(3));
  auto [out, S] = recurrence(q, k, v, initial(a["h0"], q, v), scale);
  T z;
  if (a.flag("normalize")) {
    // Summed in float64 whatever k's dtype: torch 1.13 has no half cumsum on the CPU, where
    // `reference` runs as an implementation too.
    const T sums = k.to(at::kDouble).cumsum(1).to(k.scalar_type());
    z = a["z0"].defined() ? sums + a["z0"].unsqueeze(1) : sums;
    out = out / ((q * scale * z).sum(-1, true) + kNormEps);
  }
  return NamedTensors{{"o", out}, {"ht", a.flag("final_state") ? S : T()}, {"zt", final_key_sum(a, z)}};
}

// fused_recurrent: one token at a time, the state in fp32.
OpFunction recurrent(Variant v) {
  return [v](const OpArgs& a) {
    const T q = acc(a["q"]), k = acc(a["k"]), vv = acc(a["v"]);
    const double scale = as_kernel_holds(scale_of(a.text("scale"), q.size(3)), q);
    const auto [o, S] = recurrence(q, k, vv, initial(acc(a["h0"]), q, vv), scale);
    // Variant final_state_detached: ht returned without its gradient path, so that dht
    // reaches nothing (a backward that drops the final state's cotangent).
    return emulated(a, o, v == final_state_detached ? S.detach() : S, scale, v);
  };
}

// chunk: per chunk of 64 tokens, o = (scale q) h + tril(scale q k^T) v, h the state before
// the chunk as stored in k's dtype; the state itself carried in fp32.
OpFunction chunked(Variant v) {
  return [v](const OpArgs& a) {
    const at::ScalarType dtype = a["q"].scalar_type();
    const T q = acc(a["q"]), k = acc(a["k"]), vv = acc(a["v"]);
    const double scale = as_kernel_holds(scale_of(a.text("scale"), q.size(3)), q);
    T S = initial(acc(a["h0"]), q, vv);
    std::vector<T> o;
    for (int64_t c = 0; c < q.size(1); c += kChunk) {
      const int64_t n = std::min(kChunk, q.size(1) - c);
      // [batch, heads, n, dim]
      const T qc = q.narrow(1, c, n).transpose(1, 2) * scale, kc = k.narrow(1, c, n).transpose(1, 2);
      const T vc = vv.narrow(1, c, n).transpose(1, 2);
      const T h = S.to(dtype).to(S.scalar_type());
      const T causal = at::ones({n, n}, q.options()).tril();
      // The chunk's attention A = tril(scale q k^T) is stored in v's dtype before A v
      // (chunk_fwd_o).
      const T A = (qc.matmul(kc.transpose(-1, -2)) * causal).to(dtype).to(q.scalar_type());
      o.push_back((qc.matmul(h) + A.matmul(vc)).transpose(1, 2));
      S = S + kc.transpose(-1, -2).matmul(vc);
    }
    return emulated(a, at::cat(o, 1), S, scale, v);
  };
}

// Planted: a packed call whose state is not reset where a sequence starts: each sequence
// continues from the one before (its final state and key sum), the first from its own
// initial state, as a varlen kernel that reads cu_seqlens only to place its outputs would.
NamedTensors state_across_sequences(const OpArgs& a) {
  const OpFunction each = recurrent(correct);
  const T offsets = a["cu_seqlens"];
  if (!offsets.defined()) return each(a);
  const T bounds = offsets.to(at::kCPU).to(at::kLong).contiguous();
  const int64_t* p = bounds.data_ptr<int64_t>();
  const auto first = [](const T& t) { return t.defined() ? t.narrow(0, 0, 1) : t; };
  T h = first(a["h0"]), z = first(a["z0"]);
  std::vector<T> o, ht, zt;
  for (int64_t n = 0; n + 1 < bounds.numel(); ++n) {
    OpArgs one = a;
    for (const char* name : {"q", "k", "v"}) one.set(name, a[name].narrow(1, p[n], p[n + 1] - p[n]));
    one.set("h0", h);
    one.set("z0", z);
    one.set("cu_seqlens", c10::IValue());
    one.set("final_state", true);
    const NamedTensors r = each(one);
    o.push_back(r.get("o"));
    ht.push_back(h = r.get("ht"));
    if (a.flag("normalize")) zt.push_back(z = r.get("zt"));
  }
  const bool final_state = a.flag("final_state");
  return NamedTensors{{"o", at::cat(o, 1)}, {"ht", final_state ? at::cat(ht, 0) : T()},
                      {"zt", final_state && !zt.empty() ? at::cat(zt, 0) : T()}};
}

// normalize divides by scale q . z: fla's tests draw q and k positive (|x| + 0.01), which
// keeps the denominator away from zero. Without normalize the draws stay as they are.
void positive_with_normalize(const Case& c, NamedTensors& in) {
  if (!c.flag("normalize")) return;
  for (const char* name : {"q", "k", "z0"})
    if (in.has(name)) in.set(name, in.get(name).abs() + 0.01);
}

// What the rounding errors are proportional to: the computation again on |inputs| and
// |cotangents|, its division linearised (num / den0 + num0 den / den0^2, num0 and den0
// constants), so that every term adds. Its outputs and autograd's gradients of them are
// the sums of |terms| of each result.
NamedTensors magnitudes(E e) {
  at::AutoGradMode grad_mode(true);
  const T q = e["q"].abs().requires_grad_(), k = e["k"].abs().requires_grad_();
  const T v = e["v"].abs().requires_grad_();
  const T h0 = e.or_zero("h0").abs().expand({q.size(0), q.size(2), q.size(3), v.size(3)})
                   .clone().requires_grad_();
  const double scale = scale_of(e.c.choice("scale"), q.size(3));
  auto [out, S] = recurrence(q, k, v, h0, scale);
  const T z0 = e.or_zero("z0").abs().expand({q.size(0), q.size(2), q.size(3)}).clone().requires_grad_();
  const T z = k.cumsum(1) + z0.unsqueeze(1);
  if (e.c.flag("normalize")) {
    const T den = (q * scale * z).sum(-1, true) + kNormEps;
    const T den0 = den.detach(), num0 = out.detach();
    out = out / den0 + num0 * den / (den0 * den0);
  }
  std::vector<T> ys{out}, cots{e["do"].abs()};
  const T zt = z.select(1, z.size(1) - 1);
  if (e.c.flag("final_state")) {
    ys.push_back(S);
    cots.push_back(e["dht"].abs());
    if (e.c.flag("normalize")) {
      ys.push_back(zt);
      cots.push_back(e["dzt"].abs());
    }
  }
  const auto g = torch::autograd::grad(ys, {q, k, v, h0, z0}, cots, /*retain_graph=*/false,
                                       /*create_graph=*/false, /*allow_unused=*/true);
  const auto grad = [](const T& t, const T& like) { return t.defined() ? t : at::zeros_like(like); };
  return NamedTensors{{"o", out.detach()}, {"ht", S.detach()}, {"zt", zt.detach()},
                      {"dq", grad(g[0], q)}, {"dk", grad(g[1], k)}, {"dv", grad(g[2], v)},
                      {"dh0", grad(g[3], h0)}, {"dz0", grad(g[4], z0)}};
}

// Every result is a sum along the sequence of products over k_dim or v_dim (a state entry
// sums seq + 1 terms; an output or gradient reads seq of them through a dot product of
// k_dim or v_dim): at most (seq + 2) (k_dim + v_dim) roundings deep, and the normaliser's
// key sum and division add a few. The bound grows linearly with seq: the recurrence is a
// running sum.
int64_t terms(const Case& c) {
  return (c.integer("seq") + 2) * (c.integer("k_dim") + c.integer("v_dim")) + 16;
}

// Partials rounded to the dtype on the way: for o, the chunk's attention and the state
// handed on (both stored in the dtype) and o as stored; with normalize, the key sum, the
// products, their sum and the quotient (torch, in the dtype), whose gradients torch
// computes in the dtype too. ht is the fp32 state itself.
Bound summed(const SharedMagnitudes& all, const std::string& result, int rounded_partials,
             int with_normalize) {
  return Bound::sum_of(terms, {})
      .magnitude_from(all, result)
      .partials_when([rounded_partials, with_normalize](const Case& c) {
        return rounded_partials + (c.flag("normalize") ? with_normalize : 0);
      });
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("linear_attn");
  // Sequences one short of, on and one past fla's chunk of 64 tokens, and shorter ones.
  const std::vector<IntOption> lengths{IntOption::just(20, 1), IntOption::up_to(60, 1, "max_seq"),
                                       IntOption::any_of(20, around({kChunk, 2 * kChunk}))};
  k.params = {
      extent("batch", "sequences, each of `seq` tokens", 64, {"max_batch", 2}).by_default(int64_t{1}),
      extent("seq", "tokens per sequence", 4096, {"max_seq", 16}).by_default(int64_t{4}).drawn(lengths),
      extent("heads", "heads", 64, {"max_heads", 2}).by_default(int64_t{1}),
      head_size("k_dim", "the key and query head size"),
      head_size("v_dim", "the value head size"),
      scale_param(),
      flag_param("normalize", "o divided by scale q . (the running key sum) + 1e-10")
          .true_in_percent(40),
      flag_param("initial_state", "an initial state h0 [sequences, heads, k_dim, v_dim] (absent: 0)")
          .true_in_percent(50),
      flag_param("final_state", "the final state ht returned (output_final_state)")
          .true_in_percent(50),
      split_param()};
  k.limits = head_size_limits();
  k.operator_params = {"scale", "normalize", "final_state"};
  const auto normalized_state = [](const std::string& flag) {
    return [flag](const Case& c) { return c.flag(flag) && c.flag("normalize"); };
  };
  k.inputs = {{"q", {"batch", "seq", "heads", "k_dim"}},
              {"k", {"batch", "seq", "heads", "k_dim"}},
              {"v", {"batch", "seq", "heads", "v_dim"}},
              TensorSpec("h0", kState).when_flag("initial_state").neutral(0),
              TensorSpec("z0", kKeySum).when(normalized_state("initial_state"))};
  k.outputs = {{"o", {"batch", "seq", "heads", "v_dim"}},
               TensorSpec("ht", kState).when_flag("final_state"),
               TensorSpec("zt", kKeySum).when(normalized_state("final_state"))};
  k.relate_inputs = positive_with_normalize;
  // Whole versus chunked with the state handed on, and each sequence in a call of its own:
  // a dense case's rows, or the sequences a packed case's cu_seqlens tells apart.
  TokenSequences sequences{"batch", "seq", {{"h0", "ht"}, {"z0", "zt"}}, "initial_state", "final_state", "split"};
  packed_layout(k, sequences, lengths);
  k.properties.push_back("chunked");
  k.properties.push_back("packed");
  // chunk and fused_recurrent: one function, two algorithms (Takes::same_function_as).
  k.properties.push_back("algorithms");
  k.sequences = token_sequences(k, sequences).release();  // lives as long as the program
  const auto each_sequence = [&](OpFunction f) { return one_sequence_at_a_time(k, sequences, std::move(f)); };
  k.reference = each_sequence(reference);
  k.reference_about = "float64 recurrence, token by token (oracle)";
  // o stored in q's dtype, the chunk's state in k's (a partial); ht and the gradients.
  const SharedMagnitudes all = one_sequence_at_a_time(
      k, sequences, std::make_shared<const std::function<NamedTensors(E)>>(magnitudes));
  k.bounds = {{"o", summed(all, "o", 3, 4)}, {"ht", summed(all, "ht", 0, 0)}, {"zt", summed(all, "zt", 2, 0)},
              {"dq", summed(all, "dq", 1, 3)}, {"dk", summed(all, "dk", 1, 3)}, {"dv", summed(all, "dv", 1, 3)},
              {"dh0", summed(all, "dh0", 1, 3)}, {"dz0", summed(all, "dz0", 1, 3)}};
  // Sums over the sequence and the head sizes in an order the algorithm picks.
  k.reordered_by_layout = {"o", "ht", "zt", "dq", "dk", "dv", "dh0", "dz0"};
  Takes recurrent_too;
  recurrent_too.same_function_as = "recurrent";
  k.implementations = {
      {"chunked", "chunk_linear_attn: chunks of 64 tokens, the state handed on in k's dtype",
       each_sequence(chunked(correct)), {}, recurrent_too},
      {"recurrent", "fused_recurrent_linear_attn: one token at a time, the state in fp32",
       each_sequence(recurrent(correct))},
      {"chunked@normalizer_detached",
       "planted (fla 794f183c, before #875): the normaliser's key sum has no gradient",
       each_sequence(chunked(normalizer_detached)), {}, recurrent_too},
      {"recurrent@final_state_detached",
       "planted: the backward drops the final state's cotangent dht",
       each_sequence(recurrent(final_state_detached))},
      {"recurrent@state_across_sequences",
       "planted: a packed call carries the state from one sequence into the next",
       state_across_sequences}};
  k.known_defects = {
      defect("normaliser's key sum without a gradient").in({"chunked@normalizer_detached"})
          .hunted_by("vs_reference").shows("dk")
          .when([](const Case& c) {
            return c.flag("normalize") && c.integer("batch") == 1 && c.integer("heads") == 1 &&
                   c.integer("seq") <= 2 && c.integer("k_dim") == 1 && c.integer("v_dim") == 1;
          })
          .because("normalize_with_z_state summed the keys with chunk_global_cumsum, a Triton "
                   "call outside autograd: k reached the output through the numerator only, "
                   "so dk missed the denominator's term (fla #875, 4b02d15d fixes 794f183c)"),
      defect("final state's cotangent dropped").in({"recurrent@final_state_detached"})
          .hunted_by("chunked").shows("dk")
          // Found where a cut hands the state on; shrunk to one token whose ht takes a
          // random cotangent (each property also holds its calls to the reference).
          .when([](const Case& c) {
            return c.integer("seq") == 1 && c.flag("final_state") && c.integer("batch") == 1 &&
                   c.integer("heads") == 1 && c.integer("k_dim") == 1 && c.integer("v_dim") == 1;
          })
          .first_found_by_kprop()
          .because("the gradient of the handed-on state is the next call's dh0: a backward "
                   "that ignores dht leaves the earlier tokens' dk and dv without it, which "
                   "a suite whose loss reads only o never sees"),
      defect("state carried across packed sequences").in({"recurrent@state_across_sequences"})
          .hunted_by("packed").shows("o")
          .when([](const Case& c) {
            return c.choice("layout") == "packed" && c.integers("lengths") == std::vector<int64_t>{1, 1} &&
                   c.integer("heads") == 1 && c.integer("k_dim") == 1 && c.integer("v_dim") == 1;
          })
          .first_found_by_kprop()
          .because("a varlen kernel must start each sequence from its own initial state (or "
                   "zero): one that reads cu_seqlens only to place its outputs hands the "
                   "previous sequence's state on, which every test of one sequence, or of "
                   "a dense batch, passes")};
  return k;
}());
}  // namespace
}  // namespace kprop::linear_attn
