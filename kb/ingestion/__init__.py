"""Ingestion: parse → chunk → embed → index, off the request path."""
