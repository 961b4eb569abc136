"""The browser client: HTML, CSS and JavaScript modules served by the server at /play and
/r/CODE (server/edge/webclient.py). No Python runs here; this package only ships the files."""
