"""Make `import engine` find the engine package, not this folder.

The root conftest puts tests/ on sys.path, where this folder (no __init__.py) looks like
a namespace package called `engine`. `python -m pytest` also puts the repository first,
so the real package wins; the `pytest` script does not (the editable install's finder
comes after the path), so put the repository first here for both.
"""

import sys
from pathlib import Path

REPO = str(Path(__file__).resolve().parents[2])
if REPO not in sys.path:
    sys.path.insert(0, REPO)
