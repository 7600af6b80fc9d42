"""Long-term per-user memory."""
