"""Directory sign-in latency against a local slapd, through POST /api/auth/token/ (the whole request path).

Run: .venv/bin/python -m bench.ldap_signin_bench [--users 20] [--rounds 5] [--out ldap-signin.json] [--smoke]
     (throw-away data dir and SQLite; slapd from the Debian package, seeded in a temporary directory).

Reported, each as p50/p95/max in milliseconds:
- hasher_once: one hash by the default password hasher (how busy the machine is; a local sign-in costs one);
- first: each user's first sign-in (the DocMind user, its role and mapped groups and grants are created);
- repeat: later sign-ins (bind, user search, group search, role and grants checked, nothing changed);
- local: a local account's sign-in beside the directory (Django's default password hasher);
- local_directory_down: the same with the directory refusing connections (must not grow);
- hung_directory: a directory sign-in while slapd is stopped (bounded by DOCMIND_LDAP_TIMEOUT, 1 s here).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from bench.common import arguments, percentile, setup_django, write_json
from tests.sso import slapd as directory

TIMEOUT_SECONDS = 1


def _stats(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(percentile(ordered, 0.95) * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter))
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="repeat sign-ins per user")
    args = parser.parse_args(argv)
    if args.smoke:
        args.users, args.rounds = 1, 1

    people = [directory.Person(f"user{i:03d}", f"pw-{i:03d}-directory") for i in range(args.users)]
    groups = [directory.DirectoryGroup("editors", [p.uid for p in people[::3]]),
              directory.DirectoryGroup("finance", [p.uid for p in people[::2]]),
              directory.DirectoryGroup("everyone", [p.uid for p in people])]
    server = directory.Slapd(people=people, groups=groups)
    try:
        # The directory settings are read when the settings module loads: this bench needs a process of its own.
        setup_django(unset=("DATABASE_URL", "REDIS_URL"), env={
            "DOCMIND_TOKEN_RATE": "1000000/minute",
            "DOCMIND_LDAP_URI": server.uri, "DOCMIND_LDAP_BIND_DN": directory.BIND_DN,
            "DOCMIND_LDAP_BIND_PASSWORD": directory.BIND_PASSWORD, "DOCMIND_LDAP_USER_BASE": directory.USER_BASE,
            "DOCMIND_LDAP_GROUP_BASE": directory.GROUP_BASE, "DOCMIND_LDAP_TIMEOUT": str(TIMEOUT_SECONDS),
            "DOCMIND_LDAP_GROUP_ROLES": json.dumps({groups[0].dn: "kb_editor"}),
            "DOCMIND_LDAP_GROUP_KBS": json.dumps({groups[1].dn: [{"kb": "Finance", "access": "read"}],
                                                  groups[0].dn: [{"kb": "Handbook", "access": "edit"}]}),
        })
        result = _run(server, people, args.rounds)
    finally:
        server.stop()
    write_json(result, args.out)


def _run(server: directory.Slapd, people: list[directory.Person], rounds: int) -> dict:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from kb.services import kb_create

    kb_create(name="Finance")
    kb_create(name="Handbook")
    get_user_model().objects.create_user(username="local-admin", password="a-local-password")
    client = APIClient(REMOTE_ADDR="192.0.2.10")

    def sign_in(username: str, password: str, expect: int) -> float:
        start = time.perf_counter()
        response = client.post("/api/auth/token/", {"username": username, "password": password}, format="json")
        elapsed = time.perf_counter() - start
        if response.status_code != expect:
            raise SystemExit(f"{username}: HTTP {response.status_code}, expected {expect}: {response.content!r}")
        return elapsed

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from django.contrib.auth.hashers import make_password

    # One hash of the default password hasher: the machine's speed right now, to read the other figures by.
    hasher = []
    for _ in range(5):
        start = time.perf_counter()
        make_password("a-password")
        hasher.append(time.perf_counter() - start)
    first = [sign_in(p.uid, p.password, 200) for p in people]
    repeat = [sign_in(p.uid, p.password, 200) for _ in range(rounds) for p in people]
    local = [sign_in("local-admin", "a-local-password", 200) for _ in range(10)]
    up_uri = settings.AUTH_LDAP_SERVER_URI
    settings.AUTH_LDAP_SERVER_URI = f"ldap://127.0.0.1:{directory.free_port()}"
    local_down = [sign_in("local-admin", "a-local-password", 200) for _ in range(10)]
    settings.AUTH_LDAP_SERVER_URI = up_uri
    server.pause()
    try:
        hung = [sign_in(people[0].uid, people[0].password, 503) for _ in range(3)]
    finally:
        server.resume()
    return {
        "bench": "ldap_signin", "directory": "slapd " + server.uri, "users": len(people), "rounds": rounds,
        "password_hasher": settings.PASSWORD_HASHERS[0].rsplit(".", 1)[-1],
        "timeout_s": TIMEOUT_SECONDS, "target_p50_ms": 300,
        "hasher_once": _stats(hasher), "first": _stats(first), "repeat": _stats(repeat), "local": _stats(local),
        "local_directory_down": _stats(local_down), "hung_directory": _stats(hung),
    }


if __name__ == "__main__":
    main()
