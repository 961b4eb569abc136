"""Per-connection message rate limits (pure: the caller passes the clock).

Both run on every message a client sends: they keep their state in slots and do the
least work per message (a move's profile showed them at about 2% of its CPU)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """`rate` messages per second sustained, bursts of up to `burst`."""

    rate: float
    burst: int
    tokens: float = field(init=False)
    stamp: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    def allow(self, now: float) -> bool:
        tokens = self.tokens
        if self.stamp:
            tokens += (now - self.stamp) * self.rate
            if tokens > self.burst:
                tokens = float(self.burst)
        self.stamp = now
        if tokens >= 1.0:
            self.tokens = tokens - 1.0
            return True
        self.tokens = tokens
        return False


@dataclass(slots=True)
class FloodGuard:
    """Says when a client has sent more than `limit` messages within `window` seconds.

    Counts in one-second slots, so "more than twice the rate for 5 seconds"
    is `limit = 2 * rate * 5` over a 5-second window.
    """

    limit: float
    window: float
    slots: dict[int, int] = field(default_factory=dict)  # the window's earlier seconds
    total: int = 0  # messages in the window (`slots` and `current`)
    second: int = 0  # the latest slot
    current: int = 0  # messages in it, kept here until the next second begins

    def flooding(self, now: float) -> bool:
        second = int(now)
        if second != self.second:
            # A new slot: forget those that left the window (once a second, not per message).
            if self.current:
                self.slots[self.second] = self.slots.get(self.second, 0) + self.current
            self.second = second
            self.current = self.slots.pop(second, 0)  # (a clock that went back)
            oldest = second - int(self.window) + 1
            for s in [s for s in self.slots if s < oldest]:
                self.total -= self.slots.pop(s)
        self.current += 1
        self.total += 1
        return self.total > self.limit
