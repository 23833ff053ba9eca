"""python3 -m kprop COMMAND ...: kprop's command line (see kprop/__init__.py)."""
import sys

from kprop import main

sys.exit(main())
