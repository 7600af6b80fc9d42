"""Telemetry that reads the apps: the /metrics view and the collectors it scrapes (the core: docmind.telemetry)."""
