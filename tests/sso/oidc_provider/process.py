"""Starts and stops the test identity provider (serve.py) as a process of its own, on a free port."""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


class OidcProvider:
    def __init__(self, *, users: list[dict], client_id: str, client_secret: str, redirect_uris: list[str],
                 post_logout_redirect_uris: list[str]) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        self.root = Path(tempfile.mkdtemp(prefix="docmind-oidc-"))
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.root / "signing-key.pem").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        seed = self.root / "seed.json"
        seed.write_text(json.dumps({"users": users, "client": {
            "id": client_id, "secret": client_secret, "redirect_uris": redirect_uris,
            "post_logout_redirect_uris": post_logout_redirect_uris}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DOCMIND_"))}
        env["OIDC_PROVIDER_SECRET"] = secrets.token_urlsafe(32)
        self.process = subprocess.Popen([sys.executable, "-m", "tests.sso.oidc_provider.serve", str(self.root),
                                         str(seed)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.port = self._wait_ready()
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, deadline_seconds: float = 60.0) -> int:
        end = time.monotonic() + deadline_seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                break
            line = self.process.stdout.readline()
            if not line:  # the process ended
                break
            if line.startswith("ready "):
                return int(line.split()[1])
        self.process.kill()
        _out, err = self.process.communicate()
        raise RuntimeError(f"the test identity provider did not start: {err[-2000:]}")

    def environment(self) -> dict[str, str]:
        """DocMind's DOCMIND_OIDC_* endpoints for this provider."""
        return {
            "DOCMIND_OIDC_ISSUER": f"{self.url}/o",
            "DOCMIND_OIDC_AUTHORIZATION_ENDPOINT": f"{self.url}/o/authorize/",
            "DOCMIND_OIDC_TOKEN_ENDPOINT": f"{self.url}/o/token/",
            "DOCMIND_OIDC_USERINFO_ENDPOINT": f"{self.url}/o/userinfo/",
            "DOCMIND_OIDC_JWKS_ENDPOINT": f"{self.url}/o/.well-known/jwks.json",
            "DOCMIND_OIDC_END_SESSION_ENDPOINT": f"{self.url}/o/logout/",
        }

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        shutil.rmtree(self.root, ignore_errors=True)


def provider_browser_sign_in(provider: OidcProvider, username: str, password: str):
    """A browser (requests session) signed in at the provider, as a person would be before being sent back."""
    import requests

    browser = requests.Session()
    browser.get(f"{provider.url}/accounts/login/", timeout=30)
    answer = browser.post(f"{provider.url}/accounts/login/", timeout=30, allow_redirects=False, data={
        "username": username, "password": password, "next": "/o/", "csrfmiddlewaretoken": browser.cookies["csrftoken"]})
    if answer.status_code != 302:
        raise AssertionError(f"the provider refused {username}'s sign-in: HTTP {answer.status_code}")
    return browser
