"""Timestamps in captures: ISO 8601 with a zone, or epoch seconds. Never a guessed zone."""

from __future__ import annotations

import math
from datetime import datetime


def parse_timestamp(value: object) -> float:
    """Epoch seconds from an ISO 8601 string with a zone or a number of epoch seconds.

    Raises ValueError with a message fit for the user.
    """
    if isinstance(value, bool):
        raise ValueError("expected a timestamp, got a boolean")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError("timestamp is not finite")
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 timestamp") from None
        if parsed.tzinfo is None:
            raise ValueError(f"{value!r} has no time zone (add Z or an offset such as +02:00)")
        return parsed.timestamp()
    raise ValueError(f"expected a timestamp, got {type(value).__name__}")
