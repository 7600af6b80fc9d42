"""Knowledge base: documents, chunks, domains; ingestion and retrieval."""
