"""Server paths removed from text a member may see (failure reasons, retrieval traces); the log keeps them."""
from __future__ import annotations

import re

# An absolute path of two or more segments (/srv/docmind/data/media/x.pdf, file:///…), not the path
# part of a URL (the host before it is a word character) nor a ratio like 1/2.
_SEGMENT = r"[^\s/'\"`:;,()\[\]{}<>]"
_PATH = re.compile(rf"(?:file://|(?<![\w:/.~-]))/(?:{_SEGMENT}+/)+{_SEGMENT}*")
# Inside quotes (as OSError prints them) a path may hold spaces.
_QUOTED = re.compile(r"(['\"])/[^'\"\n]*/[^'\"\n]*\1")

HIDDEN = "<server path>"


def without_paths(text: str) -> str:
    text = _QUOTED.sub(lambda m: f"{m.group(1)}{HIDDEN}{m.group(1)}", text)
    return _PATH.sub(HIDDEN, text)
