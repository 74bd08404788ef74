"""Reporting: the report model and its renderers (text, JSON)."""
