"""Throttling of failed authentications, per client address and per key id (SECURITY.md, requirement 15).

A wrong key costs the server one scrypt (16 MiB, tens of milliseconds). After ``failures`` failed attempts
within ``window`` seconds from one address, or against one key id, further attempts from that address or with
that key id are not verified at all: they wait ``tarpit`` seconds (an idle timer, no CPU) and get 429 until
the window has moved on. A querier whose key is in the cache is never throttled, so wrong keys sent from its
own address cannot lock it out; a brute force against one key id is limited to ``failures`` per window whatever
the addresses it comes from. At most ``concurrent`` scrypts run at once, so unthrottled failures cannot take
more than that many cores either.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque

__all__ = ["FailureThrottle"]


class FailureThrottle:
    """Counts failures in a sliding window per address and per key id (at most ``tracked`` of each)."""

    def __init__(self, failures: int, window: float, *, tracked: int = 100_000) -> None:
        self.failures = failures
        self.window = window
        self.tracked = tracked
        self._seen: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float] | None:
        times = self._seen.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._seen[key]
            return None
        return times

    def retry_after(self, address: str, key_id: str | None) -> float:
        """Seconds until this address and key id may try again (0: not throttled)."""
        now = time.monotonic()
        wait = 0.0
        with self._lock:
            for key in (("address", address), ("key", key_id or "")):
                if key[0] == "key" and not key_id:
                    continue
                times = self._recent(key, now)
                if times is not None and len(times) >= self.failures:
                    wait = max(wait, times[len(times) - self.failures] + self.window - now)
        return wait

    def failed(self, address: str, key_id: str | None) -> None:
        now = time.monotonic()
        with self._lock:
            for key in (("address", address), ("key", key_id or "")):
                if key[0] == "key" and not key_id:
                    continue
                times = self._seen.get(key)
                if times is None:
                    times = self._seen[key] = deque(maxlen=self.failures)
                times.append(now)
                self._seen.move_to_end(key)
            while len(self._seen) > 2 * self.tracked:
                self._seen.popitem(last=False)
