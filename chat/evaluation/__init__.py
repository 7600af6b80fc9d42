"""Answer evaluation: question sets asked through the chat pipeline, scored per category and split."""
