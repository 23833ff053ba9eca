#include "generators/value_steps.h"

#include <algorithm>

namespace kprop {

std::vector<int64_t> towards(int64_t x, int64_t simplest) {
  std::vector<int64_t> out;
  if (x == simplest) return out;
  out.push_back(simplest);
  for (int64_t diff = (x - simplest) / 2; diff != 0; diff /= 2) out.push_back(x - diff);
  const int64_t one_less = x > simplest ? x - 1 : x + 1;
  if (std::find(out.begin(), out.end(), one_less) == out.end()) out.push_back(one_less);
  return out;
}

std::function<std::vector<int64_t>(int64_t, const Case&, size_t)> along_blocks(int64_t width) {
  return [width](int64_t x, const Case&, size_t) {
    std::vector<int64_t> out;
    auto offer = [&](int64_t v) {
      if (v >= 1 && v < x && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    };
    offer(1);
    offer(x % width);
    offer(x - width);
    for (int64_t v : towards(x, 1)) offer(v);
    return out;
  };
}

}  // namespace kprop
