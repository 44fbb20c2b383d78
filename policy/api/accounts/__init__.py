"""The accounts API: your API tokens, who you are, and the audit trail."""
