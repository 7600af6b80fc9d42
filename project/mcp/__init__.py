"""DocMind's knowledge base as an MCP server (over HTTP at /mcp/ and over stdio); the client side is docmind.mcp."""
