#include "generators/rapidcheck_cases.h"

#include <rapidcheck.h>

#include "generators/draw.h"
#include "generators/shrink.h"

namespace kprop {

namespace {

rc::Shrinkable<Case> shrinkable(const Schema& schema, Case c, std::vector<DType> dtypes,
                                std::map<std::string, ParamValue> fixed) {
  return rc::shrinkable::shrinkRecur(std::move(c), [&schema, dtypes, fixed](const Case& value) {
    return rc::seq::fromContainer(shrink_steps(schema, value, dtypes, fixed));
  });
}

}  // namespace

rc::Gen<Case> cases_of(const Schema& schema, const CaseSpace& space) {
  return [&schema, space](const rc::Random& random, int size) {
    CaseSpace sized = space;
    sized.size = std::min(size, 100);
    RandomChoices choices(rc::Random(random).next());
    return shrinkable(schema, draw_case(schema, choices, sized), space.dtype_choices(),
                      space.fixed);
  };
}

}  // namespace kprop
