#include "kernels/geglu/known_defects.h"

#include "kernels/geglu/shape.h"

namespace kprop::geglu {

// A rounding defect needs nothing but elements: the plain layout. (Its minimal case is
// mostly one row of one or a few columns, but the element that shows it may lie in a
// second batch entry: shrinking moves one parameter at a time and cannot trade batch = 2
// for rows = 2.)
constexpr const char* kContiguous = "layout=contiguous";

std::vector<KnownDefect> known_defects() {
  return {
      defect("gelu in the input dtype")
          .because("the port never upcasts: every step of gelu (a^3, the tanh argument, tanh, "
                   "1 + t, the product) is rounded to bfloat16/float16, so 1 + tanh cancels for "
                   "negative a and c, da and db leave the derived bound (outside it: a bug)")
          .in({"flat@gelu_in_dtype"}).hunted_by("policy").first_found_by_kprop().shows("c")
          .when(kContiguous),
      defect("product from the fp32 gelu")
          .because("c = fl(gelu_fp32(a) * b): the product is formed from the unrounded fp32 "
                   "gelu and rounded once, more accurate than the framework, which rounds gelu "
                   "to the input dtype first: c deviates from the policy by an ulp, within the "
                   "derived bound (not a bug)")
          .in({"flat@fp32_product"}).hunted_by("policy").first_found_by_kprop()
          .shows("c deviates from policy").when(kContiguous),
      defect("db without the round trip")
          .because("the backward takes db = fl(dc * gelu_fp32(a)) without rounding gelu "
                   "through the input dtype, as the forward did: db deviates from the policy, "
                   "within the derived bound")
          .in({"flat@bwd_no_roundtrip"}).hunted_by("policy").first_found_by_kprop()
          .shows("db deviates from policy").when(kContiguous),
      defect("rows read as if contiguous")
          .because("the flatten-1D path reads a[i] and b[i] for element i: right for "
                   "contiguous inputs, but in the fused layout (a and b the halves of one "
                   "[.., 2 cols] projection) every row past the first reads the other half: "
                   "values outside the bound, and results that vary with the layout")
          .in({"flat@assumes_contiguous"}).hunted_by("invariance").first_found_by_kprop()
          .shows("c")
          .when([](const Case& c) {
            const Shape s = shape_of(c);
            return s.layout == Layout::fused && s.kernel_rows() >= 2;
          }),
  };
}

}  // namespace kprop::geglu
