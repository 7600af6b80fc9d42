"""A real OpenID Connect provider for the sign-in tests: django-oauth-toolkit in a Django project of its own.

It runs as a separate process (serve.py) with its own settings and SQLite file; only the tests start it.
"""
