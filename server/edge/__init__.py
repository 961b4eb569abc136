"""The network edge: WebSocket connections, sessions, HTTP pages, rate limits, local delivery."""
