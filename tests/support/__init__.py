"""Helpers shared by test folders: real server processes and a small WebSocket client."""
