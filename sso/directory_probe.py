"""Whether the directory answers, for /healthz: one bind as DocMind's service account, bounded in time.

The answer is kept for PROBE_TTL_SECONDS (per process, per directory setting): a monitor polling /healthz
every few seconds must not turn into a stream of binds against the organisation's directory, and a directory
that hangs must not hold every health check for its timeout. The report names no DN, host or password, and
no error text from the directory (which may quote the DN): only what kind of failure it was.
"""
from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any

import ldap

from sso.config import LdapConfig

log = logging.getLogger(__name__)

# A health check must answer quickly: DOCMIND_LDAP_TIMEOUT bounds sign-ins, and the probe takes the smaller.
PROBE_TIMEOUT_SECONDS = 3.0
PROBE_TTL_SECONDS = 30.0

_lock = threading.Lock()
_cache: dict[str, tuple[float, dict[str, Any]]] = {}


def directory_status(config: LdapConfig) -> dict[str, Any]:
    """{"ok", "reachable", "checked_seconds_ago", ["error"]}: did the directory take the service account's bind,
    within PROBE_TIMEOUT_SECONDS (or DOCMIND_LDAP_TIMEOUT when smaller)?"""
    # Keyed by the settings (hashed, the password included): a changed setting is probed afresh.
    key = hashlib.sha256("\0".join((config.uri, config.bind_dn, config.bind_password,
                                    str(config.start_tls), str(config.timeout))).encode()).hexdigest()
    with _lock:  # one probe at a time: concurrent health checks wait for it, then read its result
        cached = _cache.get(key)
        now = time.monotonic()
        if cached is None or now - cached[0] >= PROBE_TTL_SECONDS:
            cached = (now, _probe(config, timeout=min(float(config.timeout), PROBE_TIMEOUT_SECONDS)))
            _cache.clear()
            _cache[key] = cached
        checked, result = cached
    return {**result, "checked_seconds_ago": round(time.monotonic() - checked, 1)}


def forget() -> None:
    """Drop the kept answer (tests, and a settings change within one process)."""
    with _lock:
        _cache.clear()


def _probe(config: LdapConfig, *, timeout: float) -> dict[str, Any]:
    connection = None
    try:
        connection = ldap.initialize(config.uri)
        # Connect, then each operation, within `timeout`; python-ldap's own wait too, which defaults to forever.
        connection.set_option(ldap.OPT_NETWORK_TIMEOUT, timeout)
        connection.set_option(ldap.OPT_TIMEOUT, timeout)
        connection.set_option(ldap.OPT_REFERRALS, 0)
        connection.timeout = timeout
        if config.start_tls:
            connection.start_tls_s()
        # An empty bind DN binds anonymously, as the sign-in's user search then does.
        connection.simple_bind_s(config.bind_dn, config.bind_password)
    except ldap.INVALID_CREDENTIALS:
        log.warning("health: the directory refuses the service account's bind (DOCMIND_LDAP_BIND_DN/PASSWORD)")
        return {"ok": False, "reachable": True, "error": "the service account's bind is refused"}
    except ldap.TIMEOUT:
        log.warning("health: the directory did not answer within %s s", timeout)
        return {"ok": False, "reachable": False, "error": "timeout"}
    except (ldap.SERVER_DOWN, ldap.CONNECT_ERROR) as exc:
        log.warning("health: the directory is unreachable: %s", type(exc).__name__)
        return {"ok": False, "reachable": False, "error": type(exc).__name__}
    except ldap.LDAPError as exc:
        # It answered, but not with a bind: busy, unavailable, TLS refused…
        log.warning("health: the directory answered the bind with %s", type(exc).__name__)
        return {"ok": False, "reachable": True, "error": type(exc).__name__}
    finally:
        if connection is not None:
            try:
                connection.unbind_s()
            except Exception:  # noqa: BLE001 - the connection may never have opened
                pass
    return {"ok": True, "reachable": True}
