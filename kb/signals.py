"""What kb announces to the apps above it (the audit trail) without knowing them: changes its services make
with queryset updates, which send no model signals."""
from django.dispatch import Signal

# sender=Document class; kwargs: document (after the change), action ("move" | "reindex" | "retry"),
# changes ({field: [before, after]}).
document_changed = Signal()

# sender=Chunk class; kwargs: chunk (after the edit), user, before (text), after (text), reason.
chunk_edited = Signal()
