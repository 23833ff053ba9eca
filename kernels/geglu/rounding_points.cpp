#include "kernels/geglu/rounding_points.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "harness/model/host_values.h"
#include "kernels/geglu/element.h"

namespace kprop::geglu {

namespace {

// What an element of tensor `tensor` is when the rounding point `name` moves.
template <typename Acc>
struct Alternative {
  const char* tensor;
  const char* name;
  std::function<Acc(Acc dc, Acc a, Acc b)> value;
};

template <typename Acc>
std::vector<Alternative<Acc>> alternatives(at::ScalarType dtype) {
  const Element<Acc> fp32_product(dtype, Variant::fp32_product),
      no_roundtrip(dtype, Variant::bwd_no_roundtrip), in_dtype(dtype, Variant::gelu_in_dtype);
  return {
      {"c", "product from the fp32 gelu",
       [=](Acc, Acc a, Acc b) { return fp32_product.forward(a, b); }},
      {"c", "gelu in the input dtype", [=](Acc, Acc a, Acc b) { return in_dtype.forward(a, b); }},
      {"db", "db from the fp32 gelu",
       [=](Acc dc, Acc a, Acc b) { return no_roundtrip.backward(dc, a, b).second; }},
      {"db", "gelu in the input dtype",
       [=](Acc dc, Acc a, Acc b) { return in_dtype.backward(dc, a, b).second; }},
      // A kernel that keeps dc·b in the compute type: da rounded once.
      {"da", "dc*b kept in fp32",
       [=](Acc dc, Acc a, Acc b) { return round_to(dtype, dc * b * gelu_grad_fp32(a)); }},
      {"da", "gelu' in the input dtype",
       [=](Acc dc, Acc a, Acc b) { return in_dtype.backward(dc, a, b).first; }},
  };
}

bool same(double x, double y) {
  return (x == y && std::signbit(x) == std::signbit(y)) || (std::isnan(x) && std::isnan(y));
}

// The names of the alternatives that give every element of `actual`, joined by " or "
// when more than one does (a small case may not tell them apart: shrinking, which keeps
// the name a failure was found with, then stops short of such a case).
template <typename Acc>
std::string explaining(at::ScalarType dtype, const std::string& tensor,
                       const std::vector<double>& dc, const std::vector<double>& a,
                       const std::vector<double>& b, const std::vector<double>& actual,
                       const std::vector<double>& policy) {
  if (std::equal(actual.begin(), actual.end(), policy.begin(), same)) return "";
  std::string names;
  for (const auto& alt : alternatives<Acc>(dtype)) {
    if (alt.tensor != tensor) continue;
    bool explains = true;
    for (size_t i = 0; i < actual.size() && explains; ++i)
      explains = same(actual[i], static_cast<double>(alt.value(static_cast<Acc>(dc[i]),
                                                               static_cast<Acc>(a[i]),
                                                               static_cast<Acc>(b[i]))));
    if (explains) names += (names.empty() ? "" : " or ") + std::string(alt.name);
  }
  return names;
}

std::vector<double> values(const at::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  read_values(t, v.data());
  return v;
}

}  // namespace

std::string rounding_point(const Problem& p, const NamedTensors& cot, const std::string& tensor,
                           const at::Tensor& actual, const at::Tensor& policy) {
  const at::Tensor a = p.inputs.get("a");
  if (!actual.defined() || !policy.defined() || actual.sizes() != a.sizes()) return "";
  const at::Tensor dc = cot.has("dc") ? cot.get("dc") : at::zeros_like(a);
  const auto dtype = a.scalar_type();
  const auto va = values(a), vb = values(p.inputs.get("b")), vdc = values(dc);
  const auto vactual = values(actual), vpolicy = values(policy);
  return dtype == at::kDouble
             ? explaining<double>(dtype, tensor, vdc, va, vb, vactual, vpolicy)
             : explaining<float>(dtype, tensor, vdc, va, vb, vactual, vpolicy);
}

}  // namespace kprop::geglu
