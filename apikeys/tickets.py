"""The widget's tickets: a signed note that the frame was served for one key to one listed origin."""
from __future__ import annotations

from django.core import signing

from apikeys.models import ApiKey

SALT = "docmind.apikeys.widget"
# A visitor keeps a page open for a working day; a ticket older than that is refreshed by reloading.
TICKET_MAX_AGE_SECONDS = 12 * 3600
TICKET_HEADER = "HTTP_X_DOCMIND_WIDGET"


def is_widget_key(key: ApiKey) -> bool:
    return bool(key.allowed_origins)


def ticket_for(key: ApiKey, origin: str) -> str:
    return signing.dumps({"k": key.pk, "o": origin}, salt=SALT)


def ticket_is_valid(key: ApiKey, ticket: str | None) -> bool:
    """Whether `ticket` was issued by the frame for this key to an origin the key still lists."""
    if not ticket:
        return False
    try:
        data = signing.loads(ticket, salt=SALT, max_age=TICKET_MAX_AGE_SECONDS)
    except signing.BadSignature:
        return False
    return isinstance(data, dict) and data.get("k") == key.pk and data.get("o") in key.allowed_origins
