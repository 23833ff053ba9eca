// The body of the device kernels, element by element: what a program does with one
// element it covers — load its inputs, compute it as element.h says, store its outputs.
// The grids (rows.cpp, flat.cpp) decide which program covers which element and at which
// offsets it finds the inputs; loads and stores go through the emulated device memory
// (device_rows.h), which reports out-of-bounds accesses and elements stored twice.
#pragma once

#include "kernels/geglu/device_rows.h"
#include "kernels/geglu/element.h"

namespace kprop::geglu {

template <typename Acc>
class ForwardPass {
 public:
  ForwardPass(const Args& args, const RowLayout& l, Variant variant)
      : shape_(args.a.sizes().vec()),
        a_(device_rows<Acc>("a", args.a, l, l.a_row_stride)),
        b_(device_rows<Acc>("b", args.b, l, l.b_row_stride)),
        c_(device_output<Acc>("c", l, args.a.scalar_type())),
        element_(args.a.scalar_type(), variant) {}

  // Program `task` computes c[out] from a[a_offset] and b[b_offset].
  void element(int64_t task, int64_t a_offset, int64_t b_offset, int64_t out) {
    const Acc a = a_.load(a_offset, "a load"), b = b_.load(b_offset, "b load");
    c_.store(out, element_.forward(a, b), task, "c store");
  }

  at::Tensor result() const { return c_.to_tensor().view(shape_); }

 private:
  std::vector<int64_t> shape_;
  DeviceTensor<Acc> a_, b_, c_;
  Element<Acc> element_;
};

template <typename Acc>
class BackwardPass {
 public:
  BackwardPass(const Args& args, const at::Tensor& dc, const RowLayout& l, int64_t dc_row_stride,
               Variant variant)
      : shape_(args.a.sizes().vec()),
        dc_(device_rows<Acc>("dc", dc, l, dc_row_stride)),
        a_(device_rows<Acc>("a", args.a, l, l.a_row_stride)),
        b_(device_rows<Acc>("b", args.b, l, l.b_row_stride)),
        da_(device_output<Acc>("da", l, args.a.scalar_type())),
        db_(device_output<Acc>("db", l, args.a.scalar_type())),
        element_(args.a.scalar_type(), variant) {}

  // Program `task` computes da[out] and db[out] from dc, a and b at their offsets.
  void element(int64_t task, int64_t dc_offset, int64_t a_offset, int64_t b_offset,
               int64_t out) {
    const Acc dc = dc_.load(dc_offset, "dc load"), a = a_.load(a_offset, "a load"),
              b = b_.load(b_offset, "b load");
    const auto [da, db] = element_.backward(dc, a, b);
    da_.store(out, da, task, "da store");
    db_.store(out, db, task, "db store");
  }

  Gradients result() const { return {da_.to_tensor().view(shape_), db_.to_tensor().view(shape_)}; }

 private:
  std::vector<int64_t> shape_;
  DeviceTensor<Acc> dc_, a_, b_, da_, db_;
  Element<Acc> element_;
};

}  // namespace kprop::geglu
