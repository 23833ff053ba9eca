// The one registry of what registers itself (core/registry.h), and the three that
// use it: kernels, properties, precision models each refuse a second of a name.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/registry.h"
#include "harness/engine/property.h"
#include "harness/model/kernel.h"
#include "harness/model/precision_model.h"

namespace kprop {
namespace {

struct Named {
  std::string n;
  std::string name() const { return n; }
};

TEST(Registry, RefusesASecondOfANameAndListsNamesSorted) {
  Registry<Named> r("thing", "things");
  EXPECT_TRUE(r.add(std::make_unique<Named>(Named{"b"})));
  EXPECT_TRUE(r.add(std::make_unique<Named>(Named{"a"})));
  EXPECT_FALSE(r.add(std::make_unique<Named>(Named{"b"})));
  EXPECT_EQ(r.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.find("a").name(), "a");
  EXPECT_EQ(r.find_or_null("c"), nullptr);
  try {
    r.find("c");
    FAIL() << "an unknown name must throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown thing 'c'; known things: a, b");
  }
}

// A property loaded twice (a plug-in library opened again) is refused, as a kernel is.
class SecondGradient : public Property {
 public:
  std::string name() const override { return "gradient"; }
  std::string about() const override { return "a second property named gradient"; }
  std::vector<DType> dtypes() const override { return {DType::float64}; }
  Verdict check(const Kernel&, const Implementation&, const Case&) const override {
    return {};
  }
};

TEST(Registry, PropertiesRefuseASecondOfAName) {
  const auto before = property_names();
  EXPECT_FALSE(register_property(std::make_unique<SecondGradient>()));
  EXPECT_EQ(property_names(), before);
  EXPECT_EQ(find_property("gradient").about().find("a second"), std::string::npos);
}

TEST(Registry, UnknownNamesListTheKnownOnes) {
  EXPECT_THROW(find_property("nosuch"), UsageError);
  EXPECT_THROW(find_kernel("nosuch"), UsageError);
  EXPECT_THROW(find_precision_model("nosuch"), UsageError);
  const auto names = property_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

}  // namespace
}  // namespace kprop
