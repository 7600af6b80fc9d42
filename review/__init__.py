"""The review queue: answers readers marked unhelpful or the system flagged weak, for the bases' editors."""
