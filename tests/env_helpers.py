"""A prologue for the scripts the secrets tests run in a child: it records every change of
the C environment (``os.putenv`` / ``os.unsetenv``, what ``os.environ``'s changes call) with
the number of threads running then, into ``changes`` (glibc's setenv races a getenv in
another thread, so a change with more than one thread running is the defect they look for)."""

ENV_SPY = """
import os as _os, threading as _threading
changes = []
for _name in ("putenv", "unsetenv"):
    _real = getattr(_os, _name)
    def _spy(*args, real=_real, name=_name):
        changes.append((name, _os.fsdecode(args[0]), _threading.active_count()))
        return real(*args)
    setattr(_os, _name, _spy)
"""
