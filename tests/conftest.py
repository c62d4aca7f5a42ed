"""Test isolation for what the CLI configures process-wide.

``mjbot``'s entry point binds structlog and the root logger to the ``sys.stderr`` of the
moment. A test that runs ``main()`` in-process binds them to pytest's capture of that test,
which is closed when the test ends; every later in-process log line would then fail with
"I/O operation on closed file" (56 tests once did). Each test gets back the configuration it
started with.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _logging_configuration_restored() -> Iterator[None]:
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers
    root.setLevel(level)
