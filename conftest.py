"""Root conftest: registers the network-edge fakes (tests/envplugin.py sets the test environment)."""

pytest_plugins = ["tests.fakes.plugin"]
