"""Tests of kb/domains."""
