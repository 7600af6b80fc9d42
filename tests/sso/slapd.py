"""A real OpenLDAP server for tests: slapd from the Debian package, configured in a temporary directory.

The directory is seeded offline with slapadd before slapd starts, so a test's users and groups exist the
moment the server answers; tests that change the directory afterwards do it over LDAP as the root DN.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SLAPD = "/usr/sbin/slapd"
SLAPADD = "/usr/sbin/slapadd"
SCHEMA_DIR = Path("/etc/ldap/schema")
MODULE_DIR = Path("/usr/lib/ldap")

SUFFIX = "dc=docmind,dc=test"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "root-secret"
BIND_DN = f"cn=reader,{SUFFIX}"
BIND_PASSWORD = "reader-secret"
USER_BASE = f"ou=people,{SUFFIX}"
GROUP_BASE = f"ou=groups,{SUFFIX}"
# A lock time of all zeros is OpenLDAP's "locked until an administrator unlocks" (the ppolicy overlay refuses
# every bind of the entry): how a directory disables an account.
LOCKED_FOREVER = "000001010000Z"
POLICY_DN = f"cn=default,{SUFFIX}"


def available() -> bool:
    return Path(SLAPD).exists() and Path(SLAPADD).exists() and (MODULE_DIR / "back_mdb.so").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Person:
    uid: str
    password: str
    given_name: str = "Given"
    surname: str = "Surname"
    mail: str = ""
    locked: bool = False

    @property
    def dn(self) -> str:
        return f"uid={self.uid},{USER_BASE}"


@dataclass
class DirectoryGroup:
    cn: str
    members: list[str] = field(default_factory=list)  # uids

    @property
    def dn(self) -> str:
        return f"cn={self.cn},{GROUP_BASE}"


def _ldif(people: list[Person], groups: list[DirectoryGroup]) -> str:
    entries = [
        f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: docmind\no: DocMind test",
        f"dn: {BIND_DN}\nobjectClass: person\ncn: reader\nsn: reader\nuserPassword: {BIND_PASSWORD}",
        f"dn: {USER_BASE}\nobjectClass: organizationalUnit\nou: people",
        f"dn: {GROUP_BASE}\nobjectClass: organizationalUnit\nou: groups",
        f"dn: {POLICY_DN}\nobjectClass: device\nobjectClass: pwdPolicy\ncn: default\n"
        "pwdAttribute: userPassword\npwdLockout: TRUE",
    ]
    for p in people:
        lines = [f"dn: {p.dn}", "objectClass: inetOrgPerson", f"uid: {p.uid}", f"cn: {p.given_name} {p.surname}",
                 f"givenName: {p.given_name}", f"sn: {p.surname}", f"userPassword: {p.password}"]
        if p.mail:
            lines.append(f"mail: {p.mail}")
        if p.locked:
            lines.append(f"pwdAccountLockedTime: {LOCKED_FOREVER}")
        entries.append("\n".join(lines))
    for g in groups:
        # groupOfNames needs at least one member; an empty group names the bind DN, which is nobody's account.
        members = [f"uid={uid},{USER_BASE}" for uid in g.members] or [BIND_DN]
        entries.append("\n".join([f"dn: {g.dn}", "objectClass: groupOfNames", f"cn: {g.cn}",
                                  *(f"member: {m}" for m in members)]))
    return "\n\n".join(entries) + "\n"


def _config(root: Path, port: int) -> str:
    schemas = "\n".join(f"include {SCHEMA_DIR / name}.schema" for name in ("core", "cosine", "inetorgperson", "nis"))
    return f"""{schemas}
pidfile {root}/slapd.pid
modulepath {MODULE_DIR}
moduleload back_mdb
moduleload ppolicy
database mdb
suffix "{SUFFIX}"
rootdn "{ROOT_DN}"
rootpw {ROOT_PASSWORD}
directory {root}/db
maxsize 16777216
overlay ppolicy
ppolicy_default "{POLICY_DN}"
access to attrs=userPassword by anonymous auth by * none
access to * by dn.exact="{BIND_DN}" read by self read by anonymous auth
"""


class Slapd:
    """One slapd process on a free port of 127.0.0.1; `stop()` ends it and removes its files."""

    def __init__(self, *, people: list[Person], groups: list[DirectoryGroup]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="docmind-slapd-"))
        (self.root / "db").mkdir()
        self.port = free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        conf = self.root / "slapd.conf"
        conf.write_text(_config(self.root, self.port))
        seed = self.root / "seed.ldif"
        seed.write_text(_ldif(people, groups))
        subprocess.run([SLAPADD, "-q", "-f", str(conf), "-l", str(seed)], check=True, capture_output=True)
        # -d keeps slapd in the foreground (its child is this process); no log lines below "none".
        self.process = subprocess.Popen([SLAPD, "-f", str(conf), "-h", self.uri, "-d", "none"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_until_answering()

    def _wait_until_answering(self, deadline_seconds: float = 20.0) -> None:
        import ldap

        end = time.monotonic() + deadline_seconds
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"slapd exited: {self.process.stderr.read().decode(errors='replace')}")
            try:
                conn = ldap.initialize(self.uri)
                conn.simple_bind_s(ROOT_DN, ROOT_PASSWORD)
                conn.unbind_s()
                return
            except ldap.SERVER_DOWN:
                if time.monotonic() > end:
                    raise RuntimeError("slapd did not answer") from None
                time.sleep(0.05)

    def admin(self):
        """A connection bound as the root DN, for tests that change the directory."""
        import ldap

        conn = ldap.initialize(self.uri)
        conn.simple_bind_s(ROOT_DN, ROOT_PASSWORD)
        return conn

    def lock(self, person: Person) -> None:
        import ldap

        conn = self.admin()
        conn.modify_s(person.dn, [(ldap.MOD_REPLACE, "pwdAccountLockedTime", [LOCKED_FOREVER.encode()])])
        conn.unbind_s()

    def pause(self) -> None:
        """Freeze the server: connections are still accepted by the kernel but nothing answers (a hung directory)."""
        self.process.send_signal(19)  # SIGSTOP

    def resume(self) -> None:
        self.process.send_signal(18)  # SIGCONT

    def stop(self) -> None:
        if self.process.poll() is None:
            self.resume()
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        shutil.rmtree(self.root, ignore_errors=True)
