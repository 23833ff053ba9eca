#include "harness/execution/dispatch.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace kprop {

namespace {

// Handles are looked up once per name: the lookup takes a lock inside the dispatcher.
const c10::OperatorHandle& find_operator(const std::string& qualified_name) {
  static std::mutex mutex;
  static std::map<std::string, c10::OperatorHandle> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(qualified_name);
  if (it == cache.end()) {
    auto handle = c10::Dispatcher::singleton().findSchema({qualified_name, ""});
    TORCH_CHECK(handle.has_value(), "operator ", qualified_name,
                " is not registered (is its library loaded?)");
    it = cache.emplace(qualified_name, *handle).first;
  }
  return it->second;
}

OperatorErrorReader& error_reader() {
  static OperatorErrorReader reader;
  return reader;
}

}  // namespace

void set_operator_error_reader(OperatorErrorReader reader) { error_reader() = std::move(reader); }

void call_boxed(const std::string& qualified_name, torch::jit::Stack& stack,
                size_t expected_outputs) {
  const c10::OperatorHandle& op = find_operator(qualified_name);
  try {
    op.callBoxed(&stack);
  } catch (...) {
    if (error_reader())
      if (auto message = error_reader()()) throw std::runtime_error(*message);
    throw;
  }
  TORCH_CHECK(stack.size() >= expected_outputs, qualified_name, " returned ", stack.size(),
              " values, the contract needs ", expected_outputs);
}

bool has_operator(const std::string& qualified_name) {
  return c10::Dispatcher::singleton().findSchema({qualified_name, ""}).has_value();
}

at::Tensor tensor_or_undefined(const c10::IValue& v) {
  return v.isTensor() ? v.toTensor() : at::Tensor();
}

void load_operator_library(const std::string& path) {
  // RTLD_GLOBAL so that a library built against kprop's own symbols resolves them.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  TORCH_CHECK(handle != nullptr, "cannot load operator library ", path, ": ", dlerror());
}

}  // namespace kprop
