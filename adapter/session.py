"""What one platform session did: counted by the NTPU, Tenhou and mjai clients alike, for the
exit status and the last log line."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SessionSummary:
    games: int = 0
    hands: int = 0
    answers: int = 0
    decisions: int = 0
    fallbacks: int = 0
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)
    finished: bool = False  # the platform ended the session (/close, the last game's BYE)
