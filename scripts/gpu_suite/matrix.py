"""The suite as data: the parts, the upstream implementations (TARGETS) and how each part
runs them, every property of each kernel, the case sizes and the precision reports.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Tuple


PARTS = ("build", "suite", "speed", "scale", "mps", "launch", "precision")
DEFAULT_PARTS = ("build", "suite", "speed", "scale", "launch", "precision")
UPSTREAMS = ("fla", "liger", "dao")

# Every property of each kernel: the suite runs each in its own process.
PROPERTIES = {
    "causal_conv1d": ("gradient", "vs_reference", "chunked", "packed", "cores"),
    "geglu": ("gradient", "vs_reference", "policy", "invariance"),
}

# The case sizes of the speed and scale runs, per kernel.
_CONV = ("--set", "W=4", "--set", "activation=silu", "--set", "bias=true")
SIZES = {
    "geglu": {"small": (), "large": ("--limit", "max_rows=256", "--limit", "max_cols=1024")},
    "causal_conv1d": {
        "small": ("--max-length", "16", "--max-segments", "2", "--set", "D=64") + _CONV,
        "large": ("--max-length", "256", "--max-segments", "8", "--set", "D=512") + _CONV},
}

# fla's shapes in speed and scale: one dtype, an initial state, packed, no final-state
# gradient. Each new constexpr combination compiles its kernels (seconds), and float64 does
# not compile at all, so `gradient` is left out of its speed runs.
FLA_PINS = ("--set", "initial_state=true", "--set", "final_state_grad=false",
            "--set", "layout=packed", "--dtype", "float32")
DAO_REFUSAL = ("--refusal", "dao adapter: unsupported")


@dataclasses.dataclass(frozen=True)
class Target:
    """One upstream implementation, and how each part runs it."""
    name: str                       # names its runs and logs
    upstream: str                   # the --kernels word that selects it
    kernel: str
    module: str                     # its adapter (examples/upstream/)
    impl: str
    options: Tuple[str, ...] = ()   # every run's extra kprop options
    # More suite runs: (name suffix, property, options).
    extra_suite: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = ()
    speed_properties: Optional[Tuple[str, ...]] = None  # None: every property of its kernel
    pins: Tuple[str, ...] = ()      # speed and scale only
    parts: Tuple[str, ...] = ("suite", "speed", "scale")
    suite_box: str = "run_seconds"  # the setting that boxes its suite runs
    needs_extension: bool = False   # waits for the Dao extension's compile

    def properties(self):
        return PROPERTIES[self.kernel]


TARGETS = (
    Target("liger", "liger", "geglu", "kprop_liger", "liger::geglu"),
    Target("liger_ascend", "liger", "geglu", "kprop_liger", "liger_ascend::geglu",
           parts=("suite",)),
    Target("fla", "fla", "causal_conv1d", "kprop_fla", "fla::causal_conv1d",
           # The smoke test's lead: dx with a final-state gradient.
           extra_suite=(("final-state-grad", "vs_reference",
                         ("--set", "final_state_grad=true", "--dtype", "float32")),),
           speed_properties=("vs_reference", "chunked", "packed", "cores"), pins=FLA_PINS),
    # Dao's runs start when nvcc is done (~5 min on a fresh machine): --dao-seconds boxes
    # its suite runs.
    Target("dao", "dao", "causal_conv1d", "kprop_dao", "dao::causal_conv1d",
           options=DAO_REFUSAL, suite_box="dao_seconds", needs_extension=True),
)

# The GEGLU MLP at the seed's shape, matmuls on the GPU: (run, options, upstream or None).
PRECISION = (
    ("precision-seed-unscaled", ("--impl", "torch_policy"), None),
    ("precision-seed-fan-in", ("--impl", "torch_policy", "--scale", "fan_in"), None),
    ("precision-seed-fp32-product", ("--impl", "flat@fp32_product"), None),
    ("precision-seed-liger", ("--import", "kprop_liger", "--impl", "liger::geglu"), "liger"),
)
