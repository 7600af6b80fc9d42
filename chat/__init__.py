"""Chat: understanding, routing, retrieval, prompt, generation, citations, streaming."""
