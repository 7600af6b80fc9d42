"""Cache-aside copy of each user's active memories: one hash per user (field = memory id), Redis or in-process.

The database is the record; this cache only saves its reads. Contract shared by both implementations:
- `get(user_id)` is the user's cached set, or None when it is not cached (an empty set is cached too);
- `fill(user_id, items, token, ttl_seconds)` stores a set read from the database only if no change happened since
  `token = begin_read(user_id)` was taken, so a slow reader can never put back a set that a writer has
  just invalidated;
- `invalidate(user_id)` drops the whole key (any change of the set: save, invalidate, evict, clear);
- `touch(user_id, memory_id)` adds one use to that one field, atomically, and only while the set is
  cached: concurrent touches of different memories (or the same one) never lose an update.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

from memory.types import MemoryItem

LOADED_FIELD = "_"  # marks a cached set, so that a user with no memories is a cache hit too
GENERATION_TTL_SECONDS = 24 * 3600


def _check_ttl(ttl_seconds: int) -> None:
    if ttl_seconds <= 0:
        raise ValueError("ttl_seconds must be positive")


class MemoryCache(Protocol):
    def get(self, user_id: int) -> list[MemoryItem] | None: ...

    def begin_read(self, user_id: int) -> str: ...

    def fill(self, user_id: int, items: Sequence[MemoryItem], token: str, ttl_seconds: int) -> bool: ...

    def invalidate(self, user_id: int) -> None: ...

    def touch(self, user_id: int, memory_id: int) -> None: ...


def _encode(item: MemoryItem) -> str:
    return json.dumps(item.as_cache(), ensure_ascii=False)


def _decode(fields: dict[Any, Any]) -> list[MemoryItem] | None:
    if not fields:
        return None
    items = []
    for name, value in fields.items():
        name = name.decode() if isinstance(name, bytes) else str(name)
        if name == LOADED_FIELD:
            continue
        items.append(MemoryItem.from_cache(json.loads(value)))
    return sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)


# KEYS[1] hash, KEYS[2] generation; ARGV[1] expected generation, ARGV[2] ttl, ARGV[3..] field/value pairs.
_FILL = """
local gen = redis.call('GET', KEYS[2]) or '0'
if gen ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# KEYS[1] hash; ARGV[1] field. Only a cached set is touched: a lone field would look like a whole set.
_TOUCH = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local item = cjson.decode(raw)
item['access_count'] = item['access_count'] + 1
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(item))
return 1
"""


class RedisMemoryCache:
    """django-redis's raw client: the cache framework cannot express hash fields or scripted updates."""

    def __init__(self, *, client: Any, key_prefix: str) -> None:
        self._client = client
        self._prefix = key_prefix
        self._fill = client.register_script(_FILL)
        self._touch = client.register_script(_TOUCH)

    def key(self, user_id: int) -> str:
        return f"{self._prefix}memory:{int(user_id)}"

    def _gen(self, user_id: int) -> str:
        return f"{self._prefix}memory:{int(user_id)}:gen"

    def get(self, user_id: int) -> list[MemoryItem] | None:
        return _decode(self._client.hgetall(self.key(user_id)))

    def begin_read(self, user_id: int) -> str:
        raw = self._client.get(self._gen(user_id))
        return raw.decode() if isinstance(raw, bytes) else (raw or "0")

    def fill(self, user_id: int, items: Sequence[MemoryItem], token: str, ttl_seconds: int) -> bool:
        _check_ttl(ttl_seconds)
        pairs: list[str] = [LOADED_FIELD, "1"]
        for item in items:
            pairs += [str(item.id), _encode(item)]
        return bool(self._fill(keys=[self.key(user_id), self._gen(user_id)],
                               args=[token, int(ttl_seconds), *pairs]))

    def invalidate(self, user_id: int) -> None:
        pipe = self._client.pipeline(transaction=True)
        pipe.incr(self._gen(user_id))
        # Long enough to outlive any fill still in flight; a lost generation only makes fills fail.
        pipe.expire(self._gen(user_id), GENERATION_TTL_SECONDS)
        pipe.delete(self.key(user_id))
        pipe.execute()

    def touch(self, user_id: int, memory_id: int) -> None:
        self._touch(keys=[self.key(user_id)], args=[str(int(memory_id))])


class LocalMemoryCache:
    """The same contract in process memory, for the embedded default (no REDIS_URL): one process, one lock."""

    def __init__(self, *, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sets: dict[int, tuple[float, dict[int, MemoryItem]]] = {}
        self._gens: dict[int, int] = {}

    def get(self, user_id: int) -> list[MemoryItem] | None:
        with self._lock:
            entry = self._sets.get(int(user_id))
            if entry is None:
                return None
            if entry[0] <= self._clock():
                del self._sets[int(user_id)]
                return None
            items = list(entry[1].values())
        return sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)

    def begin_read(self, user_id: int) -> str:
        with self._lock:
            return str(self._gens.get(int(user_id), 0))

    def fill(self, user_id: int, items: Sequence[MemoryItem], token: str, ttl_seconds: int) -> bool:
        _check_ttl(ttl_seconds)
        with self._lock:
            if str(self._gens.get(int(user_id), 0)) != token:
                return False
            self._sets[int(user_id)] = (self._clock() + ttl_seconds, {m.id: m for m in items})
            return True

    def invalidate(self, user_id: int) -> None:
        with self._lock:
            self._gens[int(user_id)] = self._gens.get(int(user_id), 0) + 1
            self._sets.pop(int(user_id), None)

    def touch(self, user_id: int, memory_id: int) -> None:
        with self._lock:
            entry = self._sets.get(int(user_id))
            if entry is None or int(memory_id) not in entry[1]:
                return
            old = entry[1][int(memory_id)]
            entry[1][int(memory_id)] = MemoryItem(id=old.id, user_id=old.user_id, memory_type=old.memory_type,
                                                  content=old.content, access_count=old.access_count + 1,
                                                  created_at=old.created_at)
