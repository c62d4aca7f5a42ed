"""Which environment variables are mjbot's secrets, in one place, and environments without them.

A child process inherits the whole environment unless told otherwise, and anyone who can read
``/proc/PID/environ`` sees it, the child first: a program seated at the table (someone else's
bot) or the user's browser got the Tenhou ID and the status token. A program the user names
gets the environment without them (:func:`without_secrets`), keeping the user's other
variables (PATH, HOME, a venv, its own), and a secret only where the user names it in
:data:`PASS_ENV`.

The secrets: :data:`KNOWN`, every ``MJBOT_*`` name that looks like one (:data:`SECRET_NAME`),
and the names a loaded serve config declares as ``id_env`` / ``token_env`` (:func:`declare`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

KNOWN = frozenset({"MJBOT_TENHOU_ID", "MJBOT_STATUS_TOKEN"})
# MJBOT_* names that hold secrets by their look (a serve config's id_env may name MJBOT_T2_ID)
SECRET_NAME = re.compile(r"(_ID|TOKEN|SECRET|PASSWORD|PASSWD)(_|$)")
PASS_ENV = "MJBOT_PASS_SECRETS"  # comma-separated secret names an outside program is given

_declared: set[str] = set()


def declare(names: Iterable[str]) -> None:
    """Count ``names`` (a loaded serve config's ``id_env`` / ``token_env``) as secrets from
    now on: a config's names stay secrets after a reload drops them, which only keeps them
    from a child that never needed them."""
    _declared.update(names)


def is_secret(name: str) -> bool:
    """Whether the variable ``name`` holds one of mjbot's secrets."""
    return name in KNOWN or name in _declared or (
        name.startswith("MJBOT_") and SECRET_NAME.search(name) is not None)


def without_secrets(env: Mapping[str, str] | None = None,
                    keep: Iterable[str] = ()) -> dict[str, str]:
    """``env`` (this process's by default) without the secrets but those named in ``keep``."""
    kept = set(keep)
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if k in kept or not is_secret(k)}


def passed(env: Mapping[str, str] | None = None) -> list[str]:
    """The secret names the user passes to outside programs (:data:`PASS_ENV`)."""
    given = (os.environ if env is None else env).get(PASS_ENV, "")
    return [n.strip() for n in given.split(",") if n.strip()]
