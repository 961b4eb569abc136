"""The race server: asyncio WebSockets, protocol v1, games stored in Redis."""
