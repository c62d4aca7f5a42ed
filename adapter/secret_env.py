"""Which environment variables are mjbot's secrets, in one place, and environments without them.

A child process inherits the whole environment unless told otherwise, and anyone who can read
``/proc/PID/environ`` (or a program seated at the table: someone else's bot) sees it. None of
our children reads a secret (a Tenhou session logs in from the serve process itself), so every
child we start gets the environment without them: our own (:func:`without_secrets`) and an
outside program alike, which keeps the user's other variables (PATH, HOME, a venv, its own)
and gets a secret only where the user names it in :data:`PASS_ENV`.

The secrets: :data:`KNOWN`, every ``MJBOT_*`` name that looks like one (:data:`SECRET_NAME`),
and the names a loaded serve config declares as ``id_env`` / ``token_env`` (:func:`declare`).

A child started through :mod:`multiprocessing` (spawn, the fork server) takes this process's
own environment, with no way to pass another: :func:`withheld` takes the secrets out of it for
the start, and :func:`environ` is how code that reads a secret sees them all the while."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping

KNOWN = frozenset({"MJBOT_TENHOU_ID", "MJBOT_STATUS_TOKEN"})
# MJBOT_* names that hold secrets by their look (a serve config's id_env may name MJBOT_T2_ID)
SECRET_NAME = re.compile(r"(_ID|TOKEN|SECRET|PASSWORD|PASSWD)(_|$)")
PASS_ENV = "MJBOT_PASS_SECRETS"  # comma-separated secret names an outside program is given

_declared: set[str] = set()
_lock = threading.RLock()  # held while the secrets are out of os.environ (withheld)
_away: dict[str, str] = {}  # the secrets withheld now, put back when the start is done


def declare(names: Iterable[str]) -> None:
    """Count ``names`` (a loaded serve config's ``id_env`` / ``token_env``) as secrets from
    now on: a config's names stay secrets after a reload drops them, which only keeps them
    from a child that never needed them."""
    with _lock:
        _declared.update(names)


def is_secret(name: str) -> bool:
    """Whether the variable ``name`` holds one of mjbot's secrets."""
    return name in KNOWN or name in _declared or (
        name.startswith("MJBOT_") and SECRET_NAME.search(name) is not None)


def without_secrets(env: Mapping[str, str] | None = None,
                    keep: Iterable[str] = ()) -> dict[str, str]:
    """``env`` (this process's, secrets included, by default) without the secrets but those
    named in ``keep``."""
    kept = set(keep)
    source = environ() if env is None else env
    return {k: v for k, v in source.items() if k in kept or not is_secret(k)}


def passed(env: Mapping[str, str] | None = None) -> list[str]:
    """The secret names the user passes to outside programs (:data:`PASS_ENV`)."""
    given = (environ() if env is None else env).get(PASS_ENV, "")
    return [n.strip() for n in given.split(",") if n.strip()]


def environ() -> dict[str, str]:
    """This process's environment, with any secret :func:`withheld` takes out for a start."""
    with _lock:
        return {**os.environ, **_away}


def alone() -> bool:
    """Whether the calling thread is the process's only one: the one time ``os.environ`` may
    change (glibc's setenv/unsetenv race a getenv in another thread, which takes no GIL: a
    resolver's in a ``to_thread`` DNS lookup, a library's C code)."""
    return threading.active_count() == 1


@contextlib.contextmanager
def withheld() -> Iterator[bool]:
    """The secrets out of ``os.environ`` for the block (a multiprocessing start), then back;
    yields True. Only while this is the only thread (:func:`alone`): with another running it
    changes nothing and yields False, and the child takes the environment as it is (start
    the fork server early instead: adapter/thinking/worker_process.start_server); a block
    that leaves threads running (``ray.init``) leaves the secrets out of ``os.environ`` for
    good. Code that reads a secret reads :func:`environ`, which has them all the while."""
    if not alone():  # nothing changes: nothing to wait for either
        yield False
        return
    with _lock:
        taken = {k: v for k, v in os.environ.items() if is_secret(k)}
        for key in taken:
            del os.environ[key]
        _away.update(taken)
        try:
            yield True
        finally:
            if alone():  # else the block started threads (ray.init): they stay out, for
                for key, value in taken.items():  # good (environ() still has them)
                    _away.pop(key, None)
                    os.environ.setdefault(key, value)
