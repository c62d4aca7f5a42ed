"""The benchmarks, one module per ``mjbot bench NAME``: each measures a hot path against a
reference measured in the same run (benchmarks report; tests assert)."""
