// libtorch 1.x builds the symbolized C++ stack trace of every c10::Error when it is thrown
// (dladdr over each frame). kprop catches those errors by the thousand (an implementation's
// refusal, e.g. TORCH_CHECK(D % BD == 0)) and reads only their message: in a fuzz target,
// that symbolization was 18% of all time. libtorch 2.x captures the trace lazily.
#pragma once

namespace kprop {

// From now on, c10::Errors carry no C++ stack trace (libtorch 1.x; a no-op on 2.x).
// For processes that run cases by the thousand: the fuzz targets.
void skip_cpp_stack_traces_of_errors();

}  // namespace kprop
