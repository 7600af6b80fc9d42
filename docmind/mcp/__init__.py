"""MCP both ways: DocMind's knowledge base as an MCP server, and external MCP tools for the agentic loop."""
