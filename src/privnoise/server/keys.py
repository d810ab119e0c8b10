"""API keys: ``pn_<key id>_<secret>``, stored as a salted scrypt hash of the secret, compared in constant time.

The key id (public, random) finds the row; the secret (256 random bits) is never stored. Verification of an
unknown key id still runs one scrypt, so the time and the answer (401) do not say whether a querier exists.

:class:`KeyCache` remembers a key for a bounded time after its first successful scrypt: the cache holds an HMAC
(under a per-process random secret) of the key id and secret, compared in constant time, so repeated requests
cost one HMAC instead of one scrypt and one database read. A key removed or rotated in the database stays
usable in a running server process for at most the cache lifetime (``key_cache_seconds``).

The owner may keep the admin key out of the database's hands by putting its stored form in ``owner.toml``
(``admin_key_hash``, printed by ``python -m privnoise.server hash-key``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

__all__ = [
    "KeyCache",
    "admin_key_entry",
    "hash_secret",
    "new_key",
    "parse_admin_key_hash",
    "split_key",
    "verify_secret",
]

_N, _R, _P = 2**14, 8, 1
_DUMMY = "scrypt$" + "00" * 16 + "$" + "00" * 32
_MAX_SECRET = 1024


def new_key() -> tuple[str, str, str]:
    """A fresh key: (full key shown once, key id, stored hash)."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"pn_{key_id}_{secret}", key_id, hash_secret(secret)


def hash_secret(secret: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode()[:_MAX_SECRET], salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


def split_key(key: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, else None."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "pn" or len(parts[1]) != 16 or not parts[2]:
        return None
    if any(c not in "0123456789abcdef" for c in parts[1]):
        return None
    return parts[1], parts[2]


def verify_secret(secret: str, stored: str | None) -> bool:
    """Whether ``secret`` matches ``stored`` (one scrypt; a dummy hash is checked when the key id is unknown)."""
    real = stored is not None
    try:
        _, salt_hex, digest_hex = (stored or _DUMMY).split("$")
        salt, digest = bytes.fromhex(salt_hex), bytes.fromhex(digest_hex)
    except ValueError:
        return False
    computed = hashlib.scrypt(secret.encode()[:_MAX_SECRET], salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return hmac.compare_digest(computed, digest) and real


def admin_key_entry(key: str) -> str:
    """The stored form of ``key`` for ``admin_key_hash`` in owner.toml: ``<key id>:scrypt$<salt>$<digest>``."""
    parts = split_key(key)
    if parts is None:
        raise ValueError("not a privnoise API key (pn_<key id>_<secret>).")
    return f"{parts[0]}:{hash_secret(parts[1])}"


def parse_admin_key_hash(entry: str) -> tuple[str, str] | None:
    """(key id, stored hash) of an ``admin_key_hash`` entry, or None if it is malformed."""
    key_id, _, stored = entry.partition(":")
    if split_key(f"pn_{key_id}_x") is None:
        return None
    pieces = stored.split("$")
    try:
        if len(pieces) != 3 or pieces[0] != "scrypt" or len(bytes.fromhex(pieces[1])) != 16:
            return None
        if len(bytes.fromhex(pieces[2])) != 32:
            return None
    except ValueError:
        return None
    return key_id, stored


class KeyCache:
    """Keys verified by scrypt, remembered for ``lifetime`` seconds (at most ``size`` of them)."""

    def __init__(self, lifetime: float, size: int = 10_000) -> None:
        self.lifetime = lifetime
        self.size = size
        self._secret = secrets.token_bytes(32)
        self._entries: OrderedDict[str, tuple[bytes, dict[str, Any], float]] = OrderedDict()
        self._lock = threading.Lock()

    def _tag(self, key_id: str, secret: str) -> bytes:
        return hmac.new(
            self._secret, f"{key_id}\0{secret}".encode()[: _MAX_SECRET + 64], hashlib.sha256
        ).digest()

    def get(self, key_id: str, secret: str) -> dict[str, Any] | None:
        """The identity of a remembered key whose secret matches (constant-time comparison), else None."""
        with self._lock:
            entry = self._entries.get(key_id)
        if entry is None:
            return None
        tag, who, expires = entry
        if time.monotonic() >= expires:
            self.forget(key_id)
            return None
        return who if hmac.compare_digest(tag, self._tag(key_id, secret)) else None

    def put(self, key_id: str, secret: str, who: dict[str, Any]) -> None:
        if self.lifetime <= 0:
            return
        entry = (self._tag(key_id, secret), who, time.monotonic() + self.lifetime)
        with self._lock:
            self._entries[key_id] = entry
            self._entries.move_to_end(key_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def forget(self, key_id: str) -> None:
        with self._lock:
            self._entries.pop(key_id, None)
