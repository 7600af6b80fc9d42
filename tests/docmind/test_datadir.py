"""The data dir and everything in it are private to the service user."""
from __future__ import annotations

import os
import stat

from django.conf import settings

from docmind.datadir import make_private


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_it_tightens_an_existing_data_dir_and_new_files_are_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "docmind.sqlite3").write_text("x")
    (data / "docmind.sqlite3").chmod(0o644)
    (data / "media").mkdir(mode=0o755)
    before = os.umask(0o022)
    try:
        make_private(data)
        (data / "created-later").write_text("y")
        assert _mode(data) == 0o700
        assert _mode(data / "docmind.sqlite3") == 0o600 and _mode(data / "media") == 0o700
        assert _mode(data / "created-later") == 0o600
    finally:
        os.umask(before)


def test_the_running_services_data_dir_holds_no_file_others_can_read(db):
    # By now SQLite, Milvus Lite and the secret key have created their files in the test data dir.
    assert _mode(settings.DATA_DIR) == 0o700
    exposed = [p.name for p in settings.DATA_DIR.rglob("*")
               if not p.is_symlink() and _mode(p) & (stat.S_IRWXG | stat.S_IRWXO)]
    assert exposed == []


def test_an_upload_is_stored_private_even_under_a_lax_umask(settings, tmp_path):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    settings.MEDIA_ROOT = tmp_path / "media"
    before = os.umask(0o022)
    try:
        name = default_storage.save("uploads/2026/doc.txt", ContentFile(b"hello"))
    finally:
        os.umask(before)
    assert _mode(settings.MEDIA_ROOT / name) == 0o600
    assert _mode(settings.MEDIA_ROOT / "uploads" / "2026") == 0o700
