"""scripts/gpu.py's modules, one concept each: matrix (the suite as data), settings (options,
environment variables, defaults), plans (the runs the matrix expands to), dryrun, driver
(running them in their boxes), outputs (reading a run's files) and summary (summary.md and
summary.json from a results folder). Standard library only."""
