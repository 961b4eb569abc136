"""The server's wall clock, shifted by the configured offset (lets tests move time)."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Clock:
    offset_s: float = 0.0

    def now_s(self) -> float:
        return time.time() + self.offset_s

    def now_ms(self) -> int:
        return int((time.time() + self.offset_s) * 1000)

    def now_us(self) -> int:
        return int((time.time() + self.offset_s) * 1_000_000)
