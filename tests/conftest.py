"""Test isolation for what the CLI configures process-wide.

``mjbot``'s entry point binds structlog and the root logger to the ``sys.stderr`` of the
moment. A test that runs ``main()`` in-process binds them to pytest's capture of that test,
which is closed when the test ends; every later in-process log line would then fail with
"I/O operation on closed file" (56 tests once did). Each test gets back the configuration it
started with.
"""

from __future__ import annotations

import os

# One BLAS thread per test process (set before numpy is first imported; children inherit it).
# `make test` runs two pytest workers on two cores: each numpy matmul of a training step split
# over two OpenBLAS threads left four spinning threads on two cores, and the opponent models'
# quick training took 6.5 s against 1.1 s with one thread (tests/test_opponent_models.py).
# A value the environment gives is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.in_process import logging_restored

# The test process keeps its bytecode too, whatever PYTHONDONTWRITEBYTECODE says (see
# _child_processes_keep_their_bytecode for the children). pytest keeps the test modules'
# assertion-rewritten bytecode only where Python may write bytecode: with the variable set, each
# pytest process (each `make test` worker) parsed, rewrote and compiled every test module, and
# compiled mjbot's modules, again on every run: 12-14.5 s of CPU a collection against 5.2-5.5 s with
# the bytecode kept. Set here, before any test module is imported.
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def _logging_configuration_restored() -> Iterator[None]:
    with logging_restored():
        yield


@pytest.fixture(scope="session", autouse=True)
def _child_processes_keep_their_bytecode() -> Iterator[None]:
    """Sandboxes and CI images often set ``PYTHONDONTWRITEBYTECODE``. Then every Python
    process a test starts (the four bots of a judged match, each one-shot Botzone turn, every
    CLI refusal) compiles mjbot's modules again, which this editable install keeps no bytecode
    for: about 0.07 s of CPU a start, hundreds of starts a run. The children write it where
    Python always does (``__pycache__``, ignored by git). Not a ``PYTHONPYCACHEPREFIX``: that
    moves every module's bytecode, so the first start in it compiled numpy and torch too
    (torch's import: 5.9 s of CPU against 2.2 s)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        yield


@pytest.fixture(scope="session")
def _session_log_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("game-logs"))


@pytest.fixture(autouse=True)
def _game_logs_kept_out_of_the_checkout(_session_log_dir: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots a test starts with their default logging (the Botzone judge's four `mjbot
    botzone` processes, an uploaded zip) log where ``$MJBOT_LOG_DIR`` says, as a user's would:
    here a temporary folder, not ``logs/`` of the checkout the suite runs in."""
    monkeypatch.setenv("MJBOT_LOG_DIR", _session_log_dir)


@pytest.fixture(scope="session")
def _session_eval_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("eval-cache"))


@pytest.fixture(autouse=True)
def _eval_cache_kept_out_of_the_home(_session_eval_cache: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`mjbot models eval` keeps the datasets it built in a user cache
    (replay/dataset/cache.py): here a temporary folder, not the ~/.cache of whoever runs
    the suite."""
    monkeypatch.setenv("MJBOT_EVAL_CACHE", _session_eval_cache)


@pytest.fixture(scope="session")
def ntpu_match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `mjbot ntpu-server` match of two hands (seed 51, one wall, the clients rotated
    once; its first hand is won by a client) with its four clients' logs and its own match
    log. Played once per test process for the tests that only read it (the replay, the
    viewer's routes, the browser): each match is five process starts and two hands."""
    from tests.serve_helpers import mjbot

    root = tmp_path_factory.mktemp("ntpu")
    played = mjbot("ntpu-server", "--hands", "2", "--clients", "tcp", "--seed", "51",
                   "--policies", "rulebased,greedy,rulebased,rulebased", "--log-dir", str(root),
                   timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert played.returncode == 0, played.stderr
    return root
