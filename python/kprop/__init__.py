"""kprop's Python entry: ``python3 -m kprop COMMAND ... --import MODULE``.

It runs kprop's own command line (the same C++ code as the ``kprop`` executable, linked
from libkprop.so) inside this interpreter, so that the operators a module registers with
``torch.library`` under kprop's schema are implementations kprop can test
(``--impl NS::kernel``). Every command and option is the executable's; ``--import`` (repeatable)
imports a module after the ``--load`` libraries. Isolation workers are this entry again:
``python3 -m kprop __worker --import MODULE ...`` with the same environment and folder.
"""
import sys

# torch first: it loads libtorch (and registers its Python kernels' machinery) before
# kprop's library, which links the same libtorch.
import torch  # noqa: F401

from . import _kprop

__all__ = ["main"]


def main(argv=None):
    """Runs one kprop command line (``argv`` without the program's name; default
    ``sys.argv[1:]``) and returns its exit code: 0 pass, 1 a property failed, 2 bad usage."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Flush what Python buffered: kprop writes to the same file descriptors.
    sys.stdout.flush()
    sys.stderr.flush()
    return _kprop.main(["python3 -m kprop"] + args, [sys.executable, "-m", "kprop"])
