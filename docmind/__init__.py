"""DocMind: knowledge-base question answering on Django."""
