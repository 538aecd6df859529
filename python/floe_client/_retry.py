"""How long a reader waits before trying again: doubling from 0.1 s up to 2 s."""

from __future__ import annotations

BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0


def backoff(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (0 for the first retry)."""
    return min(BACKOFF_MAX, BACKOFF_FIRST * (2 ** min(attempt, 5)))
