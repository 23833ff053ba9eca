#include "kernels/geglu/known_defects.h"

#include "kernels/geglu/shape.h"

namespace kprop::geglu {

namespace {

// A rounding defect needs nothing but elements: the plain layout. (Its minimal case is
// mostly one row of one or a few columns, but the element that shows it may lie in a
// second batch entry: shrinking moves one parameter at a time and cannot trade batch = 2
// for rows = 2.)
bool contiguous(const Case& c) { return shape_of(c).layout == Layout::contiguous; }

}  // namespace

std::vector<KnownDefect> known_defects() {
  return {
      {"gelu in the input dtype",
       "the port never upcasts: every step of gelu (a^3, the tanh argument, tanh, 1 + t, the "
       "product) is rounded to bfloat16/float16, so 1 + tanh cancels for negative a and c, da "
       "and db leave the derived bound (outside it: a bug)",
       {"flat@gelu_in_dtype"}, "policy", {}, false, "c", contiguous},
      {"product from the fp32 gelu",
       "c = fl(gelu_fp32(a) * b): the product is formed from the unrounded fp32 gelu and rounded "
       "once, more accurate than the framework, which rounds gelu to the input dtype first: c "
       "deviates from the policy by an ulp, within the derived bound (not a bug)",
       {"flat@fp32_product"}, "policy", {}, false,
       "c deviates from policy", contiguous},
      {"db without the round trip",
       "the backward takes db = fl(dc * gelu_fp32(a)) without rounding gelu through the input "
       "dtype, as the forward did: db deviates from the policy, within the derived bound",
       {"flat@bwd_no_roundtrip"}, "policy", {}, false,
       "db deviates from policy", contiguous},
      {"rows read as if contiguous",
       "the flatten-1D path reads a[i] and b[i] for element i: right for contiguous inputs, but "
       "in the fused layout (a and b the halves of one [.., 2 cols] projection) every row past "
       "the first reads the other half: values outside the bound, and results that vary with "
       "the layout",
       {"flat@assumes_contiguous"}, "invariance", {}, false, "c",
       [](const Case& c) {
         const Shape s = shape_of(c);
         return s.layout == Layout::fused && s.kernel_rows() >= 2;
       }},
  };
}

}  // namespace kprop::geglu
