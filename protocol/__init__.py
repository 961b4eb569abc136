"""The wire protocol (version 1), shared by the server and the client.

Imported as `import protocol as p`: `p.Create`, `p.State`, `p.NOT_FOUND`, `p.encode`, ...
Messages and codes are in protocol/messages.py, field limits in protocol/limits.py,
the server's request decoder in protocol/decoding.py. Nothing here imports the server.
"""

from protocol.decoding import *  # noqa: F403
from protocol.limits import *  # noqa: F403
from protocol.messages import *  # noqa: F403
