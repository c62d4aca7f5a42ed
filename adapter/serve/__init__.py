"""The tournament process: ``mjbot serve CONFIG`` runs the sessions a TOML file lists under one
supervisor (restarts with backoff, a circuit breaker, daily quotas, clean stop and reload), with
an aiohttp status server (health, Prometheus metrics, a dashboard) and the web replay viewer
that ``mjbot view`` also serves on its own.

Modules, one job each: ``tomlines`` (where a key sits in a TOML file, for errors),
``config`` (the file -> validated session specs), ``policy`` (backoff, breaker, quota: pure
timing rules), ``metrics`` (a prometheus_client registry per process), ``practice`` (the
local-table worker process), ``runners`` (one run of a session of each kind), ``supervisor``
(sessions kept running), ``games`` (which files the viewer may show), ``status`` and
``viewer`` (the HTTP routes), ``app`` (the serve process: signals, reload, shutdown). Its load
benchmark (decision latency with and without HTTP load) is adapter/bench/serve.py.
"""
