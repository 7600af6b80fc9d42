"""First-run set-up for `make run`: a demo administrator and the demo knowledge base, each only once."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from docmind.roles import ADMIN, user_set_role
from kb.models import Document
from kb.services import document_ingest_path

DEMO_DIR = Path(__file__).resolve().parents[3] / "kb" / "demo_docs"


def login_url() -> str:
    """Where `make run` serves: the Makefile exports the HOST and PORT that daphne is started with."""
    host = os.environ.get("HOST", "").strip() or "127.0.0.1"
    port = os.environ.get("PORT", "").strip() or "8000"
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return f"http://{host}:{port}/login/"


class Command(BaseCommand):
    help = "Create a demo administrator if there is none and load the demo knowledge base if it is empty."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-demo", action="store_true", help="Do not load the demo documents.")

    def handle(self, *args, no_demo: bool = False, **options) -> None:
        admin = self._ensure_admin()
        if not no_demo:
            self._load_demo(admin)

    def _ensure_admin(self):
        users = get_user_model()
        existing = users.objects.filter(is_superuser=True).order_by("id").first()
        if existing:
            self.stdout.write(f"Administrator exists: log in at {login_url()} as {existing.username}.")
            return existing
        username = os.environ.get("DOCMIND_ADMIN_USER", "admin")
        password = os.environ.get("DOCMIND_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        admin = users.objects.create_superuser(username=username, password=password, email="")
        user_set_role(user=admin, role=ADMIN)
        if "DOCMIND_ADMIN_PASSWORD" in os.environ:
            where = "the password in DOCMIND_ADMIN_PASSWORD"
        else:
            # Kept in a private file of the data dir rather than printed, so it never lands in a log.
            secret_file = settings.DATA_DIR / "initial_admin_password"
            secret_file.write_text(password + "\n")
            secret_file.chmod(0o600)
            where = f"the password in {secret_file}"
        self.stdout.write(self.style.SUCCESS(
            f"Created administrator '{username}': log in at {login_url()} with {where}."))
        return admin

    def _load_demo(self, admin) -> None:
        if Document.objects.exists():
            return
        count = 0
        for path in sorted(DEMO_DIR.glob("*/*")):
            if path.is_file():
                document_ingest_path(path=path, domain=path.parent.name, user=admin)
                count += 1
        self.stdout.write(f"Queued {count} demo documents; they are indexed in the background once the server runs.")
