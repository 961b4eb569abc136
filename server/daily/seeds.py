"""Which day it is, and which deal a day starts from: the daily challenge's pure rules.

The deal's first seed is HMAC-SHA256(secret, "<date>:<game>") mapped into 1..2^31-1, so nobody
can work it out before the server publishes it (with the day's leaderboard, once the day is
over), and anyone can check afterwards that the deal was fixed in advance.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re

from protocol.messages import SEED_MAX

DAY_MS = 86_400_000

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def daily_seed(secret: bytes, date: dt.date | str, game: str) -> int:
    """The seed of `game`'s daily deal on `date` (the one place that chooses daily deals)."""
    day = date.isoformat() if isinstance(date, dt.date) else date
    digest = hmac.new(secret, f"{day}:{game}".encode(), hashlib.sha256).digest()
    # 64 bits reduced modulo 2^31 - 1: the bias is below 2^-32, invisible.
    return int.from_bytes(digest[:8], "big") % SEED_MAX + 1


class DaySeeds:
    """The secret the daily deals start from, and each day's first seed. The secret is the
    configured one or the one the store keeps; the server reads it at start-up (`use`),
    before any daily is dealt."""

    def __init__(self, secret: bytes = b"") -> None:
        self._secret = secret

    def use(self, secret: bytes) -> None:
        self._secret = secret

    def seed(self, game: str, date: dt.date) -> int:
        """The day's HMAC seed: the first candidate for its deal (server/daily/deals.py)."""
        assert self._secret, "the daily secret is read at start-up, before any deal"
        return daily_seed(self._secret, date, game)


def utc_date(now_s: float) -> dt.date:
    """The UTC calendar date at `now_s` seconds since the epoch (the server's clock)."""
    return dt.datetime.fromtimestamp(now_s, dt.UTC).date()


def day_start_s(date: dt.date) -> float:
    """Seconds since the epoch at 00:00 UTC of `date`."""
    return dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC).timestamp()


def parse_date(text: object) -> dt.date | None:
    """A strict YYYY-MM-DD date, or None for anything else (wrong type, shape or calendar day)."""
    if not isinstance(text, str) or not _ISO_DATE.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None
