# What the Python tests share, sourced after checks.sh with the script's first three
# arguments (PYTHON PYTHON_DIR SOURCE_DIR): the Python entry as a command, $py, with the
# example's and the tests' modules importable.
export PYTHONPATH=$2:$3/examples/python:$3/tests/python
py=("$1" -m kprop)
timing='[0-9]+\.[0-9]{2} s'
