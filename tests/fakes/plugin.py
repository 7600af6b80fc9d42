"""Pytest plugin with the network-edge fakes (the scripted OpenAI-compatible server lives here)."""
