"""External MCP tools for the agentic loop (client, policy, errors) and the stdio relay; the server is project.mcp."""
