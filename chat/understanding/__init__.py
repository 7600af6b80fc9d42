"""Query understanding: the 10-field `QueryClassification` of a user message."""
from chat.understanding.query_understanding import QueryUnderstanding

__all__ = ["QueryUnderstanding"]
