#!/usr/bin/env python
"""Django's command-line utility for DocMind."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:
        # A command that searched or wrote an index saves its pending in-process snapshots before Python begins to
        # exit: from then on the in-process Milvus Lite server takes no more calls.
        snapshot = sys.modules.get("docmind.indexes.snapshot")
        if snapshot is not None:
            snapshot.settle()


if __name__ == "__main__":
    main()
