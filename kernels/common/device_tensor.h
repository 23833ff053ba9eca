// A tensor in the emulated device's global memory.
//
// Emulated kernels read and write only through this class, the way a Triton kernel only
// touches memory through tl.load/tl.store: values are held in the compute type `Acc`
// (float, or double for float64 inputs), loads convert from the storage dtype exactly,
// stores round to the storage dtype (round-to-nearest-even, as `fp_downcast_rounding=
// "rtne"`). Out-of-bounds accesses and stores of one element by two tasks are reported
// to MemcheckLog; an out-of-bounds load yields 0, an out-of-bounds store is dropped.
// Buffers the kernel allocates with torch.empty start as NaN, so that an element nobody
// writes cannot pass unnoticed.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/model/host_values.h"
#include "harness/model/memcheck.h"

namespace kprop {

// Rounds v to `storage` and back: the value a store followed by a load produces.
template <typename Acc>
Acc round_to(at::ScalarType storage, Acc v) {
  switch (storage) {
    case at::kFloat: return static_cast<Acc>(static_cast<float>(v));
    case at::kBFloat16: return static_cast<Acc>(static_cast<float>(c10::BFloat16(static_cast<float>(v))));
    case at::kHalf: return static_cast<Acc>(static_cast<float>(c10::Half(static_cast<float>(v))));
    default: return v;  // float64
  }
}

template <typename Acc>
class DeviceTensor {
 public:
  DeviceTensor() = default;

  // An input, read-only: read in place when it already is contiguous in the compute
  // type (no copy: kprop makes thousands of small calls a second), else converted.
  DeviceTensor(std::string name, const at::Tensor& t)
      : name_(std::move(name)), storage_(t.scalar_type()), sizes_(t.sizes().vec()),
        numel_(t.numel()) {
    if (t.scalar_type() == compute_type() && t.is_contiguous()) {
      input_ = t;  // keeps the memory alive
      borrowed_ = t.data_ptr<Acc>();
    } else {
      data_.resize(static_cast<size_t>(numel_));
      read_values(t, data_.data());
    }
  }

  // A buffer the kernel allocates: torch.empty (poisoned with NaN) or torch.zeros.
  static DeviceTensor allocate(std::string name, std::vector<int64_t> sizes,
                               at::ScalarType storage, bool zeroed) {
    DeviceTensor t;
    t.name_ = std::move(name);
    t.storage_ = storage;
    t.sizes_ = std::move(sizes);
    t.numel_ = c10::multiply_integers(t.sizes_);
    t.data_.assign(t.numel_, zeroed ? Acc(0) : std::numeric_limits<Acc>::quiet_NaN());
    t.writer_.assign(t.numel_, kNoWriter);
    return t;
  }

  bool defined() const { return !sizes_.empty(); }
  int64_t numel() const { return numel_; }
  at::ScalarType storage() const { return storage_; }

  Acc load(int64_t offset, const char* site) const {
    if (offset < 0 || offset >= numel()) {
      MemcheckLog::record(MemoryFinding::Kind::out_of_bounds_load, name_, site, offset, numel());
      return Acc(0);
    }
    return borrowed_ != nullptr ? borrowed_[offset] : data_[offset];
  }

  // `task` identifies the program instance (grid task) that stores. Only buffers (from
  // allocate, which gives every element a writer) take stores.
  void store(int64_t offset, Acc v, int64_t task, const char* site) {
    if (offset < 0 || offset >= numel()) {
      MemcheckLog::record(MemoryFinding::Kind::out_of_bounds_store, name_, site, offset, numel());
      return;
    }
    TORCH_CHECK(!writer_.empty(), "DeviceTensor: ", name_, " is an input, not a buffer");
    if (writer_[offset] != kNoWriter && writer_[offset] != task)
      MemcheckLog::record(MemoryFinding::Kind::write_conflict, name_, site, offset, numel());
    writer_[offset] = task;
    data_[offset] = round_to(storage_, v);
  }

  // Host-side view of a buffer's values (after the kernel), in the compute type.
  const std::vector<Acc>& values() const { return data_; }

  // A buffer as the host would see it: in its storage dtype.
  at::Tensor to_tensor() const { return tensor_of(data_.data(), sizes_, storage_); }

 private:
  static at::ScalarType compute_type() {
    return std::is_same<Acc, double>::value ? at::kDouble : at::kFloat;
  }

  std::string name_;
  at::ScalarType storage_ = at::kFloat;
  std::vector<int64_t> sizes_;
  int64_t numel_ = 0;
  at::Tensor input_;               // an input read in place ...
  const Acc* borrowed_ = nullptr;  // ... through this pointer
  std::vector<Acc> data_;          // a buffer, or a converted input
  static constexpr int64_t kNoWriter = -1;
  std::vector<int64_t> writer_;  // outputs only: last task that stored each element
};

}  // namespace kprop
