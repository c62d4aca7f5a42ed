"""Stopping a helper task without losing a cancellation aimed at the task that stops it.

``task.cancel()`` then ``with suppress(CancelledError): await task`` is the common idiom, and it
has a hole: if the *caller* is cancelled while it waits (serve cancelling a session past its
stop deadline, say), the CancelledError it receives is suppressed along with the helper's own,
and the caller carries on as if nothing had happened — into its next game, perhaps. Here the
helper's cancellation is absorbed and the caller's is raised again, which
``Task.cancelling()`` (Python 3.11) tells apart.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any]) -> BaseException | None:
    """Cancel ``task`` and wait until it has ended. Returns the exception it ended with other
    than its cancellation (for the caller to log), else None; raises CancelledError when the
    calling task is itself being cancelled."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception as exc:
        return exc
    return None


async def cancel_and_log(task: asyncio.Future[Any], log: Any, event: str, **fields: Any) -> None:
    """:func:`cancel_and_wait`, with an error the task raised on its way out (its log not
    closed, say) logged as ``event``, not swallowed."""
    error = await cancel_and_wait(task)
    if error is not None:
        log.error(event, error=f"{type(error).__name__}: {error}", **fields)
