"""python3 -m kprop COMMAND ...: kprop's command line (see kprop/__init__.py).

``repro`` is Python's alone (kprop/repro.py): the script it writes holds the source of a
Python adapter's call."""
import sys

from kprop import main

if sys.argv[1:2] == ["repro"]:
    from kprop.repro import main as repro_main
    sys.exit(repro_main(sys.argv[2:]))
sys.exit(main())
