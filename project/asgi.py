"""ASGI entry point of a server process: the application (project.routing) and, once, the work a server starts
in the background (project.startup: index and dictionary warm-up, the ingestion and evaluation workers, the
knowledge map)."""
from project.routing import application  # sets Django up before project.startup reads settings
from project.startup import on_server_start

__all__ = ["application"]

on_server_start()
