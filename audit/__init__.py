"""The audit trail: who changed what and when, with before/after values (django-auditlog's LogEntry)."""
