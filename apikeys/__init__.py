"""API keys for integrations and the embeddable chat widget: scoped to bases and to read or ask."""
