// The GEGLU MLP precision model (harness/model/precision_model.h): the module of the Ascend
// GEGLU port's bf16 test, x -> gate_proj, up_proj -> GEGLU -> down_proj, forward and
// backward, with the matmuls through ATen and GEGLU through the implementation's
// operators.
//
//   x [N = batch*seq, hidden]      h_g = x Wg^T, h_u = x Wu^T          (K = hidden)
//   c = geglu(h_g, h_u)            y = c Wd^T                          (K = intermediate)
//   dc = dy Wd                     dWd = dy^T c                        (K = hidden, N)
//   (da, db) = geglu_bwd(dc, h_g, h_u)
//   dWg = da^T x, dWu = db^T x     dx = rd(da Wg + db Wu)              (K = N, intermediate)
// dx is the sum of the two projections' input gradients, each a bf16 tensor, as autograd
// accumulates them. Inputs, weights and the cotangent dy are drawn by kprop's seeded
// random_tensor in float64 (weights scaled by 1/sqrt(fan_in) with --scale fan_in) and
// rounded to the low dtype once: every chain starts from the same values.
#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <chrono>
#include <cmath>

#include "core/errors.h"
#include "harness/model/precision_model.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "kernels/geglu/ops.h"
#include "kernels/geglu/policy_error.h"

namespace kprop::geglu_mlp {

namespace {

// kprop's own implementations are CPU emulations; an outside one (--load) runs where the
// matmuls run.
bool emulated_on_cpu(const Implementation& impl) {
  return impl.op_namespace.rfind("kprop_", 0) == 0;
}

struct Shape {
  int64_t batch, seq, hidden, intermediate, num_cores, buffer_bytes;
  int64_t tokens() const { return batch * seq; }
};

// The chain's inputs in one dtype on one device: x [N, H], w_gate and w_up [I, H],
// w_down [H, I], dy [N, H].
struct Inputs {
  at::Tensor x, w_gate, w_up, w_down, dy;
  Inputs to(at::ScalarType dtype) const {
    return {x.to(dtype), w_gate.to(dtype), w_up.to(dtype), w_down.to(dtype), dy.to(dtype)};
  }
};

Inputs draw_inputs(const Shape& s, const PrecisionSetup& setup, at::ScalarType low) {
  const bool fan_in = setup.scale == WeightScale::fan_in;
  const auto draw = [&](std::vector<int64_t> sizes, uint64_t stream, double scale) {
    auto t = random_tensor(sizes, Distribution::normal, setup.seed, stream, DType::float64);
    if (scale != 1) t = t * scale;
    return t.to(low).to(setup.device);
  };
  const double gate_scale = fan_in ? 1 / std::sqrt(double(s.hidden)) : 1;
  const double down_scale = fan_in ? 1 / std::sqrt(double(s.intermediate)) : 1;
  return {draw({s.tokens(), s.hidden}, 0, 1), draw({s.intermediate, s.hidden}, 1, gate_scale),
          draw({s.intermediate, s.hidden}, 2, gate_scale),
          draw({s.hidden, s.intermediate}, 3, down_scale), draw({s.tokens(), s.hidden}, 4, 1)};
}

// Every tensor of one chain, in the chain's order (dx1, dx2: the two parts of dx).
struct Chain {
  at::Tensor h_gate, h_up, c, y, dc, dw_down, da, db, dw_gate, dw_up, dx1, dx2, dx;
};

// The chain with GEGLU through `impl`; `shared` holds the matmuls before GEGLU (h_gate,
// h_up, dc), which do not depend on it.
Chain chain(const Implementation& impl, const Inputs& in, const Shape& s,
            const Chain* shared = nullptr) {
  Chain k;
  if (shared) {
    k.h_gate = shared->h_gate, k.h_up = shared->h_up, k.dc = shared->dc;
  } else {
    k.h_gate = at::mm(in.x, in.w_gate.t());
    k.h_up = at::mm(in.x, in.w_up.t());
    k.dc = at::mm(in.dy, in.w_down);
  }
  // GEGLU sees the module's [batch, seq, intermediate] activations.
  const std::vector<int64_t> rows{s.batch, s.seq, s.intermediate};
  const auto device = in.x.device();
  const auto here = [&](const at::Tensor& t) {
    return (emulated_on_cpu(impl) ? t.cpu() : t).view(rows);
  };
  k.c = geglu::geglu_forward(impl.op_namespace, here(k.h_gate), here(k.h_up), s.num_cores,
                      s.buffer_bytes)
            .to(device)
            .reshape({s.tokens(), s.intermediate});
  k.y = at::mm(k.c, in.w_down.t());
  k.dw_down = at::mm(in.dy.t(), k.c);
  auto [da, db] = geglu::geglu_backward(impl.op_namespace, here(k.dc), here(k.h_gate), here(k.h_up),
                                 s.num_cores, s.buffer_bytes);
  k.da = da.to(device).reshape({s.tokens(), s.intermediate});
  k.db = db.to(device).reshape({s.tokens(), s.intermediate});
  k.dw_gate = at::mm(k.da.t(), in.x);
  k.dw_up = at::mm(k.db.t(), in.x);
  k.dx1 = at::mm(k.da, in.w_gate);
  k.dx2 = at::mm(k.db, in.w_up);
  k.dx = k.dx1 + k.dx2;
  return k;
}

// The rounding point that explains every element of GEGLU output `tensor` where the
// implementation differs from the framework, as geglu's Kernel names it ("" if none).
std::string rounding_point(const std::string& tensor, const Chain& impl, const Chain& framework,
                           const Shape& s) {
  const std::map<std::string, at::Tensor> outputs{
      {"c", impl.c}, {"da", impl.da}, {"db", impl.db}};
  const std::map<std::string, at::Tensor> policy{
      {"c", framework.c}, {"da", framework.da}, {"db", framework.db}};
  if (at::equal(outputs.at(tensor), policy.at(tensor))) return "";
  const std::vector<int64_t> rows{s.batch, s.seq, s.intermediate};
  Problem p;  // what rounding_point reads: the GEGLU call's inputs and cotangent
  p.inputs.set("a", impl.h_gate.cpu().view(rows));
  p.inputs.set("b", impl.h_up.cpu().view(rows));
  NamedTensors cotangents;
  cotangents.set("dc", impl.dc.cpu().view(rows));
  return find_kernel("geglu").rounding_point(p, cotangents, tensor,
                                             outputs.at(tensor).cpu().view(rows),
                                             policy.at(tensor).cpu().view(rows));
}

Bounded transposed(const Bounded& b) {
  if (b.is_exact()) return {b.value.t(), {}, {}};
  return {b.value.t(), b.worst.t(), b.typical.t()};
}

// GEGLU in float64 on the low-precision chain's own inputs, with the bound of the policy's
// own roundings there (its inputs exact): how far the kernel itself may be.
struct Local {
  Bounded c, da, db;
};

Local local_bounds(const Implementation& reference, const Chain& low, const Shape& s,
                   double u) {
  const std::vector<int64_t> rows{s.batch, s.seq, s.intermediate};
  const auto device = low.h_gate.device();
  const auto on_cpu = [&](const at::Tensor& t) { return t.cpu().view(rows); };
  const auto back = [&](const at::Tensor& t) {
    return t.to(device).reshape({s.tokens(), s.intermediate});
  };
  const at::Tensor c = geglu::geglu_forward(reference.op_namespace, on_cpu(low.h_gate),
                                            on_cpu(low.h_up), s.num_cores, s.buffer_bytes);
  const auto [da, db] =
      geglu::geglu_backward(reference.op_namespace, on_cpu(low.dc), on_cpu(low.h_gate),
                            on_cpu(low.h_up), s.num_cores, s.buffer_bytes);
  const Bounded a = exact_input(low.h_gate), b = exact_input(low.h_up),
                dc = exact_input(low.dc);
  Local l;
  l.c = forward_error(back(c), a, b, u);
  std::tie(l.da, l.db) = backward_error(back(da), back(db), dc, a, b, u);
  return l;
}

// The derived bounds of every tensor of the chain, from the float64 chain's values.
struct Bounds {
  Bounded c, y, dw_down, da, db, dw_gate, dw_up, dx;
};

// `framework`: where the framework's matmuls run (their accumulation is probed there).
Bounds chain_bounds(const Inputs& in, const Chain& exact, at::ScalarType low,
                    const c10::Device& framework) {
  const double u = unit_roundoff(low), u32 = unit_roundoff(at::kFloat);
  const double u_mm = matmul_accumulation(low, framework), tiny = smallest_normal(low);
  const auto mm = [&](const at::Tensor& product, const Bounded& a, const Bounded& b) {
    return matmul_error(product, a, b, u_mm, u, tiny);
  };
  const Bounded x = exact_input(in.x), w_gate = exact_input(in.w_gate),
                w_up = exact_input(in.w_up), w_down = exact_input(in.w_down),
                dy = exact_input(in.dy);
  const Bounded h_gate = mm(exact.h_gate, x, transposed(w_gate));
  const Bounded h_up = mm(exact.h_up, x, transposed(w_up));
  const Bounded dc = mm(exact.dc, dy, w_down);
  Bounds b;
  b.c = forward_error(exact.c, h_gate, h_up, u);
  b.y = mm(exact.y, b.c, transposed(w_down));
  b.dw_down = mm(exact.dw_down, transposed(dy), b.c);
  std::tie(b.da, b.db) = backward_error(exact.da, exact.db, dc, h_gate, h_up, u);
  b.dw_gate = mm(exact.dw_gate, transposed(b.da), x);
  b.dw_up = mm(exact.dw_up, transposed(b.db), x);
  // Two bf16 tensors added in fp32 and rounded to bf16: two roundings.
  b.dx = rounded_sum(exact.dx, {mm(exact.dx1, b.da, w_gate), mm(exact.dx2, b.db, w_up)},
                     u + 2 * u32, tiny);
  return b;
}

// Seconds since `start`, and restarts it.
double lap(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - start).count();
  start = now;
  return s;
}

// cuBLAS may reduce bf16 and fp16 matmuls in reduced precision (split-K partial sums in
// the low dtype), which no fp32-accumulation bound covers: switched off for the rest of the
// process (a report is one run). bf16's switch exists from PyTorch 2.0 on; its getter's
// type changed later, so the previous setting is not read back.
void full_precision_reductions(const at::Device& device) {
  if (!device.is_cuda()) return;
  at::globalContext().setAllowFP16ReductionCuBLAS(false);
#if TORCH_VERSION_MAJOR >= 2
  at::globalContext().setAllowBF16ReductionCuBLAS(false);
#endif
}

// libtorch 1.13 has no float16 matmul on the CPU: say so before drawing anything.
void refuse_missing_matmul(at::ScalarType low, const at::Device& device) {
  const auto one = at::ones({1, 1}, at::TensorOptions().dtype(low).device(device));
  try {
    at::mm(one, one);
  } catch (const c10::Error&) {
    throw UsageError(fmt::format("{} matmuls are not implemented on this libtorch's {}{}",
                                 c10::toString(low), device.str(),
                                 device.is_cuda() ? "" : "; try --device cuda"));
  }
}

class GegluMlp final : public PrecisionModel {
 public:
  std::string name() const override { return "geglu_mlp"; }
  std::string about() const override {
    return "x -> gate_proj, up_proj -> GEGLU -> down_proj, forward and backward; matmuls "
           "through ATen, GEGLU through the implementation";
  }
  std::string kernel() const override { return "geglu"; }
  std::string framework_implementation() const override { return "torch_policy"; }
  std::vector<ModelParam> params() const override {
    return {{"batch", 2, 1, 1024, "batch size"},
            {"seq", 2048, 1, 1 << 20, "sequence length"},
            {"hidden", 2048, 1, 1 << 16, "hidden size (x, y)"},
            {"intermediate", 4096, 1, 1 << 16, "intermediate size (GEGLU)"},
            {"num_cores", 48, 1, 1024, "cores the GEGLU emulations tile for"},
            {"buffer_bytes", 192 * 1024, 1024, 1 << 30, "on-chip buffer of the emulations"}};
  }
  std::vector<DType> dtypes() const override { return {DType::bfloat16, DType::float16}; }
  std::string bound_model() const override {
    return "Each tensor's bound carries rounding errors through the whole chain, element "
           "by element from the float64 values: a bf16 matmul of reduction length K adds "
           "γ_K(2^-24)·|A||B| (fp32 accumulation) and one rounding u·|C|, and carries its "
           "input's error e_A as e_A·|B|; GEGLU adds the policy's roundings (c = "
           "rd(rd(gelu(a))·b), db = rd(dc·rd(gelu(a))), da = rd(rd(dc·b)·gelu'(a)), gelu and "
           "gelu' in fp32) and carries its inputs' errors through gelu' and gelu''. The worst "
           "case keeps every second-order term and holds for any summation order; the "
           "typical one adds input errors in quadrature and uses λ√K·u for accumulation "
           "(λ = 1). README: \"Is it rounding?\".";
  }

  ModelRun run(const PrecisionSetup& setup) const override {
    const Shape s{setup.params.at("batch"),        setup.params.at("seq"),
                  setup.params.at("hidden"),       setup.params.at("intermediate"),
                  setup.params.at("num_cores"),    setup.params.at("buffer_bytes")};
    refuse_too_many_elements("x (batch*seq*hidden)", s.tokens() * s.hidden);
    refuse_too_many_elements("c (batch*seq*intermediate)", s.tokens() * s.intermediate);
    refuse_too_many_elements("w_gate (intermediate*hidden)", s.intermediate * s.hidden);
    const at::ScalarType low = scalar_type(setup.dtype);
    refuse_missing_matmul(low, setup.device);
    full_precision_reductions(setup.device);

    ModelRun run;
    auto clock = std::chrono::steady_clock::now();
    const Inputs in = draw_inputs(s, setup, low);
    run.seconds.push_back({"inputs", lap(clock)});

    const Chain impl = chain(setup.impl, in, s);
    const Chain framework = setup.framework.op_namespace == setup.impl.op_namespace
                                ? impl
                                : chain(setup.framework, in, s, &impl);
    run.seconds.push_back({fmt::format("{} chains", to_string(setup.dtype)), lap(clock)});

    const Inputs in64 = in.to(at::kDouble);
    const Chain exact = chain(setup.reference, in64, s);
    run.seconds.push_back({"float64 chain", lap(clock)});

    const Bounds b = chain_bounds(in64, exact, low, setup.device);
    const Local own = local_bounds(setup.reference, impl, s, unit_roundoff(low));
    run.seconds.push_back({"bounds", lap(clock)});

    // How each tensor's magnitude grows with the shape (standard deviations; the largest
    // of more elements is a little larger still).
    const bool fan_in = setup.scale == WeightScale::fan_in;
    const std::map<std::string, double> tokens{{"batch", 0.5}, {"seq", 0.5}};
    const auto with = [](std::map<std::string, double> a, const std::map<std::string, double>& b) {
      for (const auto& [k, v] : b) a[k] += v;
      return a;
    };
    const std::map<std::string, double> hidden{{"hidden", 1}};
    const std::map<std::string, double> ratio{{"hidden", 0.5}, {"intermediate", -0.5}};
    const std::map<std::string, double> none;
    const auto g = [&](const std::map<std::string, double>& unscaled,
                       const std::map<std::string, double>& scaled) {
      return fan_in ? scaled : unscaled;
    };

    const auto add = [&](const std::string& name, const std::string& about, int64_t k,
                         const at::Tensor& a, const at::Tensor& f, const Bounded& bound,
                         std::map<std::string, double> growth, std::vector<int64_t> sizes,
                         const Bounded* local = nullptr) {
      const auto here = [&](const at::Tensor& t) { return t.cpu().reshape(sizes); };
      ChainTensor t;
      t.name = name;
      t.about = about;
      t.kernel_output = local != nullptr;
      t.reduction = k;
      t.impl = here(a);
      t.framework = here(f);
      t.exact = here(bound.value);
      t.bound = here(bound.worst);
      t.typical = here(bound.typical);
      t.growth = std::move(growth);
      if (local) {
        t.rounding_point = rounding_point(name, impl, framework, s);
        t.local_exact = here(local->value);
        t.local_bound = here(local->worst);
        t.local_typical = here(local->typical);
      }
      run.tensors.push_back(std::move(t));
    };
    const std::vector<int64_t> act{s.batch, s.seq, s.intermediate}, io{s.batch, s.seq, s.hidden};
    const std::vector<int64_t> wi{s.intermediate, s.hidden}, wo{s.hidden, s.intermediate};
    add("c", "GEGLU forward output", 0, impl.c, framework.c, b.c, g(hidden, none), act, &own.c);
    add("y", "output", s.intermediate, impl.y, framework.y, b.y,
        g(with(hidden, {{"intermediate", 0.5}}), none), io);
    add("dw_down", "down_proj weight grad", s.tokens(), impl.dw_down, framework.dw_down,
        b.dw_down, g(with(hidden, tokens), tokens), wo);
    add("da", "GEGLU grad of the gate input", 0, impl.da, framework.da, b.da, g(hidden, ratio),
        act, &own.da);
    add("db", "GEGLU grad of the up input", 0, impl.db, framework.db, b.db, g(hidden, ratio),
        act, &own.db);
    add("dw_gate", "gate_proj weight grad", s.tokens(), impl.dw_gate, framework.dw_gate,
        b.dw_gate, g(with(hidden, tokens), with(ratio, tokens)), wi);
    add("dw_up", "up_proj weight grad", s.tokens(), impl.dw_up, framework.dw_up, b.dw_up,
        g(with(hidden, tokens), with(ratio, tokens)), wi);
    add("dx", "input grad", s.intermediate, impl.dx, framework.dx, b.dx,
        g(with(hidden, {{"intermediate", 0.5}}), none), io);
    run.seconds.push_back({"collect", lap(clock)});
    return run;
  }
};

const bool registered = register_precision_model(std::make_unique<GegluMlp>());

}  // namespace

}  // namespace kprop::geglu_mlp
