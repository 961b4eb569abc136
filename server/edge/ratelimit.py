"""Per-connection message rate limits (pure: the caller passes the clock)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """`rate` messages per second sustained, bursts of up to `burst`."""

    rate: float
    burst: int
    tokens: float = field(init=False)
    stamp: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    def allow(self, now: float) -> bool:
        if self.stamp:
            self.tokens = min(float(self.burst), self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass
class FloodGuard:
    """Says when a client has sent more than `limit` messages within `window` seconds.

    Counts in one-second slots, so "more than twice the rate for 5 seconds"
    is `limit = 2 * rate * 5` over a 5-second window.
    """

    limit: float
    window: float
    slots: dict[int, int] = field(default_factory=dict)
    total: int = 0  # messages in `slots`
    second: int = 0  # the latest slot

    def flooding(self, now: float) -> bool:
        second = int(now)
        if second != self.second:
            # A new slot: forget those that left the window (once a second, not per message).
            self.second = second
            oldest = second - int(self.window) + 1
            for s in [s for s in self.slots if s < oldest]:
                self.total -= self.slots.pop(s)
        self.slots[second] = self.slots.get(second, 0) + 1
        self.total += 1
        return self.total > self.limit
