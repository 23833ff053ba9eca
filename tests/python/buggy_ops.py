"""A Python causal_conv1d with a planted defect, for tests/python/test_python_entry.sh:
``buggy::causal_conv1d`` routes the final state's gradient (dht) into x's rows only, so
a sequence shorter than W loses the share that belongs to the initial state (dh0) - the
defect kprop found in the Ascend backward's merged fix. Everything else is
examples/python/causal_conv1d_ops.py's correct kernel."""
import causal_conv1d_ops as ops


def backward(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht, num_cores):
    return ops.gradients(x, weight, bias, initial_state, cu_seqlens, activation, dy, dht,
                         pass_dht_to_initial_state=False)


_buggy = ops.register("buggy", ops.forward, backward)
