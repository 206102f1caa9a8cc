"""Recorders and outputs: the event log, run summaries, SLS-compatible files."""
