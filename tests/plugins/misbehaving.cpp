// Implementations of the test kernel scaled_tanh (tests/kernels/scaled_tanh) that compute
// the right values until they misbehave: they crash, hang, throw or exit. They exist to
// test kprop's crash isolation (harness/execution/isolation.h) and its judgement of exceptions
// (harness/engine/property.h), and live in a plugin of their own
// (libkprop_misbehaving_plugin.so) that no normal run loads.
//
//   plugin_ok::scaled_tanh       never misbehaves
//   {crash,hang,throw}_5th::...  the 5th forward call of the process misbehaves
//   {crash,hang,throw,exit}_wide::...
//                                every forward call with cols >= KPROP_MISBEHAVE_MIN_COLS
//                                (default 16) misbehaves: a case-dependent defect, which
//                                shrinks to rows = 1, cols = that threshold
//
// crash: SIGSEGV; hang: sleeps forever; throw: a c10::Error whose message names the call
// and the case's size (so it varies from case to case); exit: exit code 3.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

#include "harness/spec/registered_schema.h"

namespace {


using OptTensor = c10::optional<at::Tensor>;

enum class Misbehaviour { none, crash, hang, raise, exit };
enum class When { never, fifth_call, wide };

int64_t min_cols() {
  const char* text = std::getenv("KPROP_MISBEHAVE_MIN_COLS");
  return text ? std::atoll(text) : 16;
}

void misbehave(Misbehaviour m, const char* name, int64_t call, const at::Tensor& x) {
  switch (m) {
    case Misbehaviour::none: return;
    case Misbehaviour::crash: std::raise(SIGSEGV); return;
    case Misbehaviour::hang:
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    case Misbehaviour::raise:
      TORCH_CHECK(false, name, ": refuses this case (forward call ", call, ", ", x.size(0), "x",
                  x.size(1), ")");
    case Misbehaviour::exit: _exit(3);
  }
}

// y = tanh(x) s (+ b), computed in float64 and rounded once: well inside the kernel's bound.
template <Misbehaviour M, When W>
at::Tensor forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  static int64_t calls = 0;
  ++calls;
  static const char* name = "misbehaving scaled_tanh";
  if ((W == When::fifth_call && calls == 5) || (W == When::wide && x.size(1) >= min_cols()))
    misbehave(M, name, calls, x);
  at::Tensor y = at::tanh(x.to(at::kDouble)) * s.to(at::kDouble);
  if (b && b->defined()) y = y + b->to(at::kDouble);
  return y.to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> backward(const at::Tensor& x, const at::Tensor& s,
                                                        const OptTensor& b, const at::Tensor& dy) {
  const at::Tensor t = at::tanh(x.to(at::kDouble)), d = dy.to(at::kDouble);
  const auto dtype = x.scalar_type();
  at::Tensor dx = (d * s.to(at::kDouble) * (1 - t * t)).to(dtype);
  at::Tensor ds = (d * t).to(dtype);
  at::Tensor db = b && b->defined() ? d.sum(0).to(dtype) : at::Tensor();
  return {dx, ds, db};
}

}  // namespace

#define KPROP_MISBEHAVING(ns, m, w)                                  \
  TORCH_LIBRARY_FRAGMENT(ns, lib) {                                  \
    lib.def(kprop::registered_schema("scaled_tanh_fwd").c_str());                   \
    lib.def(kprop::registered_schema("scaled_tanh_bwd").c_str());                   \
    lib.impl("scaled_tanh_fwd", forward<Misbehaviour::m, When::w>);  \
    lib.impl("scaled_tanh_bwd", backward);                           \
  }

KPROP_MISBEHAVING(plugin_ok, none, never)
KPROP_MISBEHAVING(crash_5th, crash, fifth_call)
KPROP_MISBEHAVING(hang_5th, hang, fifth_call)
KPROP_MISBEHAVING(throw_5th, raise, fifth_call)
KPROP_MISBEHAVING(crash_wide, crash, wide)
KPROP_MISBEHAVING(hang_wide, hang, wide)
KPROP_MISBEHAVING(throw_wide, raise, wide)
KPROP_MISBEHAVING(exit_wide, exit, wide)
