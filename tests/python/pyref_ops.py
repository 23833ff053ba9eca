"""Registers kprop's Python float64 references (python/kprop/references.py) as
`pyref::<kernel>`, for tests/python/test_references.sh to hold them to the C++ oracle."""
from kprop import references

references.register()
