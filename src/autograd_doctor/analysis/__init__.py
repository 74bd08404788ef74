"""Analysis: turns recorded events and exceptions into diagnoses."""
