"""Tests of chat/offline."""
