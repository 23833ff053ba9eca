"""kprop checks declared in a pytest test module (docs/pytest.md).

A module-level ``Check`` (or a list of them) named as a test function is (``test_*``) is
one pytest test: kprop's search over the
kernel's cases (``kprop.check``), run by the plugin ``kprop.pytest_plugin``, which fails the
test with the defect's identity and the command that replays its kept case::

    from kprop.pytest import Check

    test_swiglu = Check("swiglu", impl="mine::swiglu", imports=["my_ops"],
                        properties=["vs_reference", "layout"], dtypes=["float32"])
"""

import sys

__all__ = ["Check"]


class Check:
    """One ``kprop check`` as a pytest test.

    ``kernel`` and ``impl`` (``NS::kernel``, registered by one of ``imports`` or by the test
    module itself) are what ``kprop check KERNEL --impl IMPL`` takes; ``properties``,
    ``dtypes``, ``set`` (pinned parameters, ``{"W": 4}``), ``limits``, ``device``,
    ``oracle_device``, ``seed``, ``shrink``, ``libraries`` (``--load``), ``refusals`` (the error
    texts the implementation declares) and ``case_timeout`` too, as ``kprop.check`` takes them. ``cases`` is the number of cases
    unless pytest's ``--kprop-cases N`` says otherwise (default 100).

    ``corpus``: a folder of known defects, which the search goes on past, and where it
    keeps new ones (relative to the test module's folder); by default a fresh folder under
    pytest's temporary folder, so that a defect fails the test on every run.
    ``isolate``: run the implementation in worker processes (a crash fails this test, not
    pytest); they import ``imports``, so the implementation must be registered by one of
    them. ``marks``: pytest marks for the test (``pytest.mark.skipif(...)``). ``name``:
    the test's name inside a list (default: kernel and impl).
    """

    def __init__(self, kernel, impl=None, *, properties=(), dtypes=(), set=None, limits=None,
                 imports=(), device=None, oracle_device="auto", cases=None, seed=None,
                 corpus=None, isolate=False, shrink=True, libraries=(), refusals=(),
                 case_timeout=20.0, marks=(), name=None):
        if isinstance(properties, str) or isinstance(imports, str) or isinstance(dtypes, str):
            raise TypeError("Check: properties, imports and dtypes are lists")
        self.kernel, self.impl = kernel, impl
        self.properties, self.dtypes = list(properties), list(dtypes)
        self.set, self.limits = dict(set or {}), dict(limits or {})
        self.imports, self.device = list(imports), device
        self.cases, self.seed, self.corpus = cases, seed, corpus
        self.isolate, self.shrink = isolate, shrink
        self.oracle_device, self.libraries = oracle_device, list(libraries)
        self.refusals, self.case_timeout = list(refusals), case_timeout
        self.marks, self.name = list(marks), name
        # Where it was declared: the line pytest points at when it fails.
        caller = sys._getframe(1)
        self.line = caller.f_lineno

    @property
    def id(self):
        return self.name or (f"{self.kernel}-{self.impl}" if self.impl else self.kernel)

    def __repr__(self):
        return f"Check({self.kernel!r}, impl={self.impl!r})"
