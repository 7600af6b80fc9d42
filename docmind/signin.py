"""What a failed sign-in tells its page: whether an external directory could not be asked.

The backends that talk to a directory mark the request; the login page, the admin login and the token
endpoint read the mark to say "the directory is unavailable" instead of "wrong password".
"""
from __future__ import annotations

from django.http import HttpRequest

_MARK = "_docmind_directory_unavailable"


def mark_directory_unavailable(request: HttpRequest | None) -> None:
    if request is not None:
        setattr(request, _MARK, True)


def directory_unavailable(request: HttpRequest | None) -> bool:
    return bool(getattr(request, _MARK, False))
