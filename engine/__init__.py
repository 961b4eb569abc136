"""The shared rules engine."""
