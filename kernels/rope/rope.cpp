// rope: rotary position embedding of queries and keys, as Hugging Face's Llama applies it
// and Liger-Kernel's Triton kernel (ops/rope.py) computes it:
//   q_rot = q cos + rotate_half(q) sin,   rotate_half([x1, x2]) = [-x2, x1],
// over q [batch, q_heads, seq, head_dim] and k [batch, kv_heads, seq, head_dim], with cos
// and sin [1 or batch, seq, head_dim] (shared by the batch, or one per sequence when the
// position ids are given per sequence). Each holds the same angles twice, pos / 10000^(2i /
// head_dim), as Hugging Face builds them; the kernel reads only their first half.
// `rows` emulates the kernel: one program per token, each half rotated in the tensors'
// dtype, every product and sum rounded there. The planted variants are states of that file
// before two of Liger's fixes, one code path each.
#include <cmath>

#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/spec/kernel_spec.h"

namespace kprop::rope {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr double kBase = 10000.0;
enum Variant { correct, batch_of_cos_ignored, backward_rotates_forward };

int64_t head_dim(const Case& c) { return 2 * c.integer("half_dim"); }
int64_t cos_batch(const Case& c) { return c.choice("cos") == "shared" ? 1 : c.integer("batch"); }

// x rotated by the angles whose cos and sin are c, s ([cb, 1, seq, half], broadcast over
// heads): [x1 c - x2 s, x2 c + x1 s], or by minus the angles (the backward).
T rotated(const T& x, const T& c, const T& s, bool inverse) {
  const int64_t half = x.size(-1) / 2;
  const T x1 = x.slice(-1, 0, half), x2 = x.slice(-1, half);
  if (inverse) return at::cat({x1 * c + x2 * s, x2 * c - x1 * s}, -1);
  return at::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
}

// The first half of cos or sin as the kernel reads it, broadcast over heads. Before #477
// every sequence read the rows of the first one.
T first_half(const T& t, Variant v) {
  const T h = t.slice(-1, 0, t.size(-1) / 2).unsqueeze(1);
  return v == batch_of_cos_ignored ? h.slice(0, 0, 1) : h;
}

OpFunction forward(Variant v) {
  return [v](const OpArgs& a) {
    const T c = first_half(a["cos"], v), s = first_half(a["sin"], v);
    return NamedTensors{{"q_rot", rotated(a["q"], c, s, false)},
                        {"k_rot", rotated(a["k"], c, s, false)}};
  };
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const T c = first_half(a["cos"], v), s = first_half(a["sin"], v);
    // Rotating back by minus the angles; the planted variant rotates forward again, which
    // position 0 (sin = 0) cannot tell apart.
    const bool inverse = v != backward_rotates_forward;
    return NamedTensors{{"dq", rotated(a["dq_rot"], c, s, inverse)},
                        {"dk", rotated(a["dk_rot"], c, s, inverse)}};
  };
}

// Each sequence's positions: 0, 1, ... (sequential); the same from an offset of its own up
// to 2^15, as a continued or shifted sequence has (offset); or restarting at random tokens,
// as packed documents do (packed).
T positions(const Case& c) {
  const int64_t rows = cos_batch(c), seq = c.integer("seq");
  const T u = random_tensor({rows, seq + 1}, Distribution::uniform, c.seed, 2, DType::float64);
  const std::string& kind = c.choice("positions");
  T pos = at::arange(seq, at::kDouble).expand({rows, seq}).clone();
  if (kind == "offset") return pos + ((u.slice(1, seq) + 1) * 16384).floor();
  if (kind == "packed") {
    auto p = pos.accessor<double, 2>();
    auto r = u.accessor<double, 2>();
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t t = 1; t < seq; ++t) p[b][t] = r[b][t] > 1.0 / 3 ? p[b][t - 1] + 1 : 0;
  }
  return pos;
}

// Drawn on the CPU whatever the device: a device's cos and sin would not give the host's
// bits.
Problem materialize(const Case& c, const c10::Device&) {
  const int64_t b = c.integer("batch"), seq = c.integer("seq"), hd = head_dim(c);
  auto values = [&](int64_t heads, uint64_t stream) {
    return random_tensor({b, heads, seq, hd}, c.distribution, c.seed, stream, c.dtype);
  };
  const T inv_freq = at::pow(kBase, -at::arange(0, hd, 2, at::kDouble) / static_cast<double>(hd));
  const T angles = positions(c).unsqueeze(-1) * inv_freq;  // [cb, seq, half]
  const auto dtype = scalar_type(c.dtype);
  const T cos = at::cat({angles.cos(), angles.cos()}, -1).to(dtype);
  const T sin = at::cat({angles.sin(), angles.sin()}, -1).to(dtype);
  return Problem{c, {{"q", values(c.integer("q_heads"), 0)}, {"k", values(c.integer("kv_heads"), 1)},
                     {"cos", cos}, {"sin", sin}}};
}

// |x1 c| + |x2 s| and |x2 c| + |x1 s|: what each rotated element's two products add up to.
T rotation_magnitude(const T& x, E e) {
  const T c = first_half(e["cos"], correct).abs(), s = first_half(e["sin"], correct).abs();
  const int64_t half = x.size(-1) / 2;
  const T x1 = x.slice(-1, 0, half).abs(), x2 = x.slice(-1, half).abs();
  return at::cat({x1 * c + x2 * s, x2 * c + x1 * s}, -1);
}

// Two products and their sum, each rounded in the tensors' dtype.
Bound rotation(std::string tensor) {
  return Bound::elementwise(1, [tensor](E e) { return rotation_magnitude(e[tensor], e); }, 2);
}

// The smallest heads a minimal case keeps: one query and one key head of size 2.
bool one_head_pair(const Case& c) {
  return c.integer("q_heads") == 1 && c.integer("kv_heads") == 1 && c.integer("half_dim") == 1;
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("rope");
  k.params = {
      extent("batch", "sequences", 64, {"max_batch", 4}).by_default(int64_t{1}),
      extent("seq", "tokens per sequence", 4096, {"max_seq", 16}).by_default(int64_t{4}),
      extent("q_heads", "query heads", 128, {"max_q_heads", 8}).by_default(int64_t{2}),
      extent("kv_heads", "key heads (grouped-query attention has fewer)", 128, {"max_kv_heads", 8})
          .by_default(int64_t{1}),
      // One short of, on and one past the kernel's padded power of two, and the half of
      // head sizes models use (64, 80, 96, 128, 256).
      param_spec("half_dim", ParamType::integer, "half the head size: head_dim = 2 half_dim",
                 int64_t{1})
          .by_default(int64_t{4})
          .within(1, 256)
          .drawn(std::vector<IntOption>{IntOption::just(20, 1),
                                        IntOption::any_of(50, {2, 3, 31, 32, 33, 40, 48, 63, 64, 65, 128}),
                                        IntOption::up_to(30, 1, "max_half_dim")}),
      choice_param("cos", "cos and sin shared by the batch [1, seq, head_dim] or one per "
                   "sequence [batch, seq, head_dim] (position ids given per sequence)",
                   {"shared", "per_sequence"}, {50, 50}),
      choice_param("positions", "each sequence's positions: 0, 1, ... (sequential), from an "
                   "offset of its own (offset), or restarting as packed documents do (packed)",
                   {"sequential", "offset", "packed"}, {40, 30, 30})};
  k.limits = {{"max_half_dim", 8, 1, 256, "largest half head size drawn uniformly"}};
  k.dims = {Dim{"head_dim", head_dim}, Dim{"cos_batch", cos_batch}};
  // Hugging Face's q and k come from a projection viewed as [batch, seq, heads, head_dim]
  // and transposed: stored token-major.
  const std::vector<int64_t> token_major{0, 2, 1, 3};
  k.inputs = {TensorSpec("q", {"batch", "q_heads", "seq", "head_dim"}).stored_as("token-major", token_major),
              TensorSpec("k", {"batch", "kv_heads", "seq", "head_dim"}).stored_as("token-major", token_major),
              TensorSpec("cos", {"cos_batch", "seq", "head_dim"}).no_gradient(),
              TensorSpec("sin", {"cos_batch", "seq", "head_dim"}).no_gradient()};
  k.outputs = {
      TensorSpec("q_rot", {"batch", "q_heads", "seq", "head_dim"}).stored_as("token-major", token_major),
      TensorSpec("k_rot", {"batch", "kv_heads", "seq", "head_dim"}).stored_as("token-major", token_major)};
  k.materialize = materialize;
  k.reference = [](const OpArgs& a) {
    const T c = a["cos"].unsqueeze(1), s = a["sin"].unsqueeze(1);
    auto rotate_half = [](const T& x) {
      const int64_t half = x.size(-1) / 2;
      return at::cat({-x.slice(-1, half), x.slice(-1, 0, half)}, -1);
    };
    return NamedTensors{{"q_rot", a["q"] * c + rotate_half(a["q"]) * s},
                        {"k_rot", a["k"] * c + rotate_half(a["k"]) * s}};
  };
  k.bounds = {{"q_rot", rotation("q")}, {"k_rot", rotation("k")},
              {"dq", rotation("dq_rot")}, {"dk", rotation("dk_rot")}};
  k.implementations = {
      {"rows", "one program per token, both halves rotated in the tensors' dtype", forward(correct),
       backward(correct)},
      {"rows@cos_batch", "planted (before #477): every sequence reads the first one's cos and sin",
       forward(batch_of_cos_ignored), backward(batch_of_cos_ignored)},
      {"rows@backward_sign", "planted: the backward rotates by the angles, not by minus them",
       forward(correct), backward(backward_rotates_forward)}};
  k.known_defects = {
      defect("per-sequence cos read as shared").in({"rows@cos_batch"}).hunted_by("vs_reference")
          .shows("q_rot")
          // Two sequences at different positions: offsets of their own, or packed ones
          // that restart differently.
          .when([](const Case& c) {
            return one_head_pair(c) && c.integer("batch") == 2 && c.choice("cos") == "per_sequence" &&
                   c.choice("positions") != "sequential";
          })
          .because("the program of token t read cos row t % seq of the first sequence: position "
                   "ids given per sequence ([batch, seq, head_dim]) were ignored past the first"),
      defect("backward rotates forward").in({"rows@backward_sign"}).hunted_by("vs_reference")
          .shows("dq")
          // A position other than 0: the second token, or the first one at an offset.
          .when([](const Case& c) {
            return one_head_pair(c) && c.integer("batch") == 1 && c.choice("cos") == "shared" &&
                   (c.choice("positions") == "sequential" ? c.integer("seq") == 2
                                                          : c.integer("seq") == 1);
          })
          .first_found_by_kprop()
          .because("the gradient of a rotation is the rotation by minus the angle; at position "
                   "0 (sin = 0) the two agree, so a one-token test passes")};
  return k;
}());
}  // namespace
}  // namespace kprop::rope
