"""The package's shape stays as [criteria] left it: criteria dispatched by their kind
objects, an acyclic import graph, few long modules, each saying why."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

from synthflow.criteria import KINDS

PACKAGE = Path(__file__).resolve().parents[2] / "synthflow"
MAX_LONG_MODULES = 8
LONG = 300
LONG_FUNCTION = 80


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def test_no_criterion_kind_is_compared_by_name_outside_the_criteria_package():
    found = []
    for name, path in _modules().items():
        if name.startswith("synthflow.criteria"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                consts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)]
                if any(isinstance(v, str) and v in KINDS for v in consts):
                    found.append(f"{name}:{node.lineno}")
    assert found == []


def _imports(tree: ast.AST):
    """Every import statement, those under ``if TYPE_CHECKING:`` left out (never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for stmt in node.orelse for n in _imports_of(stmt))
            continue
        yield from _imports_of(node)


def _imports_of(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def _named_modules(tree: ast.AST, package: str) -> Iterator[str]:
    """Modules a module reaches through importlib: the string constants naming one.

    ``importlib.import_module("synthflow.cli.sweep")``, a lazy loader's
    ``"synthflow.generators.pep:PEP"`` table, a forkserver preload list: any string
    that is a dotted module name of the package, optionally with ``:attribute``. An
    f-string starting with ``"synthflow.public."`` (a module chosen at run time) names
    at least the package ``synthflow.public``.
    """
    whole = re.compile(rf"^{re.escape(package)}(\.[a-z_0-9]+)+(:[A-Za-z_0-9]+)?$")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if whole.match(node.value):
                yield node.value.partition(":")[0]
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                prefix = first.value
                if prefix.endswith(".") and whole.match(prefix[:-1]):
                    yield prefix[:-1]


# Modules a module names for another interpreter to import, never importing them itself.
OTHER_PROCESS = {
    # The sweep's fork server (a process of its own) preloads workers.boot, which imports
    # workers.forkserver there, in that fresh interpreter: no circle in either process.
    "synthflow.sweep.workers.forkserver": {"synthflow.sweep.workers.boot"},
}


def _import_graph(root: Path) -> nx.DiGraph:
    """Module -> each module of the package it imports, at import time or later.

    ``import`` and ``from`` statements anywhere (inside functions too; those under
    ``if TYPE_CHECKING:`` left out), and modules reached through importlib (see
    :func:`_named_modules`). ``root`` is the package's directory.
    """
    modules = _modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = nx.DiGraph()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        targets: list[str | None] = []
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets += [resolve(a.name) for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets += [resolve(t) for t in (base, *(f"{base}.{a.name}" for a in node.names))]
        # A string names a module only if it is one (not a logger "synthflow.notices").
        named = set(_named_modules(tree, root.name)) - OTHER_PROCESS.get(name, set())
        targets += [m for m in named if m in modules]
        for found in targets:
            # Importing a.b.c runs a/__init__ and a/b/__init__ first: edges to those
            # packages too (but not to the importer's own packages, already running).
            while found:
                if found != name and not name.startswith(found + "."):
                    graph.add_edge(name, found)
                found = found.rpartition(".")[0] if "." in found else ""
    return graph


# [stages] #62: the planner, cost, selection and audit ask a kind (once_per_release,
# release_once, planned_measurement, once_mechanisms, published_noise_sd, linear_relation)
# and never import the regression family. Only the acceptance API re-exports two of its
# names (DPRegressionFit, fit_dp_regression), for callers of the library.
REGRESSION_API = {"synthflow.acceptance.evaluate"}


def test_only_the_criteria_package_imports_the_regression_family():
    graph = _import_graph(PACKAGE)
    family = "synthflow.criteria.regression"
    importers = {
        a
        for a, b in graph.edges
        if (b == family or b.startswith(family + ".")) and not a.startswith("synthflow.criteria")
    }
    assert importers == REGRESSION_API
    # the probe sees the family's own imports (its kinds import their fit)
    assert graph.has_edge("synthflow.criteria.regression.coefficients", family + ".fit")


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_the_import_graph_has_no_cycle_even_through_imports_inside_functions():
    # (A cycle through a package's __init__ broke ``import synthflow.criteria`` in a
    # fresh interpreter while every test, importing synthflow.config first, passed.)
    graph = _import_graph(PACKAGE)
    assert graph.number_of_edges() > 300  # the walk found the imports
    assert _cycles(graph) == []
    # Modules reached only through importlib count: the CLI's command modules, loaded
    # by name, and the generators' lazy "module:Class" table.
    assert graph.has_edge("synthflow.cli", "synthflow.cli.sweep")
    assert graph.has_edge("synthflow.generators.table", "synthflow.generators.pep")
    for module, others in OTHER_PROCESS.items():  # each exception still named there
        tree = ast.parse(_modules()[module].read_text())
        assert others <= set(_named_modules(tree, "synthflow")), module
    # ...and none between packages ([shape]): each subpackage (and each top-level module)
    # is one node, so that acceptance -> criteria -> acceptance through two different
    # modules counts too. The package's own __init__ (lazy exports) is left out.
    packages = nx.DiGraph()
    for a, b in graph.edges:
        pa, pb = _package_of(a), _package_of(b)
        if pa and pb and pa != pb:
            packages.add_edge(pa, pb, via=(a, b))
    assert {"synthflow.criteria", "synthflow.acceptance", "synthflow.jobs"} <= set(packages)
    cycles = [sorted(c) for c in nx.strongly_connected_components(packages) if len(c) > 1]
    assert cycles == [], [
        packages.edges[e]["via"] for c in cycles for e in packages.subgraph(c).edges
    ]


def test_the_import_graph_finds_a_cycle_reached_only_through_importlib(tmp_path):
    root = tmp_path / "fakepkg"
    (root / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from fakepkg import b\n",
        "b.py": (
            "import importlib\n\n\ndef load():\n"
            '    return importlib.import_module("fakepkg.sub.c")\n'
        ),
        "sub/__init__.py": "",
        # A lazy loader's "module:attr" table; a logger's name is no module.
        "sub/c.py": 'TABLE = {"x": "fakepkg.a:Thing"}\nLOG = "fakepkg.notices"\n',
        "d.py": 'import importlib\n\nM = importlib.import_module(f"fakepkg.sub.{1}")\n',
    }
    for name, text in files.items():
        (root / name).write_text(text)
    graph = _import_graph(root)
    assert graph.has_edge("fakepkg.b", "fakepkg.sub.c")
    assert graph.has_edge("fakepkg.b", "fakepkg.sub")  # its package's __init__ runs first
    assert graph.has_edge("fakepkg.sub.c", "fakepkg.a")
    assert graph.has_edge("fakepkg.d", "fakepkg.sub")  # an f-string names the package
    assert not any("notices" in n for n in graph)
    assert _cycles(graph) == [["fakepkg.a", "fakepkg.b", "fakepkg.sub.c"]]


def _imported_modules(tree: ast.AST, name: str, modules: dict[str, Path]) -> Iterator[str]:
    """Every module of the package that module ``name`` imports or names (see above)."""
    package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):  # TYPE_CHECKING imports too: they couple all the same
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield base
            # ``from synthflow.config import _values`` imports the module _values.
            yield from (f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules)
    yield from _named_modules(tree, PACKAGE.name)


def _private_owner(module: str) -> str | None:
    """The subpackage a private module (``synthflow.<package>._x``) belongs to, if it is one.

    The package's own private top-level modules (``synthflow._util.lazy``) are anyone's.
    """
    parts = module.split(".")
    for i in range(2, len(parts)):
        if parts[i].startswith("_"):
            return ".".join(parts[:i])
    return None


def test_no_module_imports_another_packages_private_module():
    # [stages]: a subpackage's private modules are its own; others import what the
    # package exports (its __init__ or a public module).
    modules = _modules()
    found = set()
    for name, path in modules.items():
        for target in _imported_modules(ast.parse(path.read_text()), name, modules):
            owner = _private_owner(target) if target.startswith("synthflow.") else None
            if owner and name != owner and not name.startswith(owner + "."):
                found.add(f"{name} -> {target}")
    assert sorted(found) == [], "\n".join(sorted(found))
    # The probe finds what it looks for: the packages import their own private modules.
    own = _imported_modules(
        ast.parse(modules["synthflow.criteria"].read_text()), "synthflow.criteria", modules
    )
    assert "synthflow.criteria._params" in set(own)
    assert _private_owner("synthflow.config._x") == "synthflow.config"
    assert _private_owner("synthflow._util.lazy") is None


# What the privacy core may import of synthflow besides itself: the errors and the one
# atomic write (with the helper package around it, which imports nothing), none of which
# imports anything of synthflow.
PRIVACY_BELOW = {"synthflow.errors", "synthflow._util", "synthflow._util.files"}


def test_the_privacy_package_is_at_the_bottom():
    # [stages] (#62): the ledger, its head, the reservations, the rng and the accountants
    # (zCDP, Renyi, PLD) import no other package, even inside a function or by name.
    graph = _import_graph(PACKAGE)
    privacy = [n for n in graph if n == "synthflow.privacy" or n.startswith("synthflow.privacy.")]
    assert {"synthflow.privacy.ledger", "synthflow.privacy.rng"} <= set(privacy)
    outside = {
        f"{a} -> {b}"
        for a in privacy
        for b in graph.successors(a)
        if not b.startswith("synthflow.privacy") and b not in PRIVACY_BELOW | {"synthflow"}
    }
    assert outside == set()
    for below in PRIVACY_BELOW:  # ...and what it imports imports nothing of synthflow
        assert set(graph.successors(below)) <= {"synthflow"}, below


def _package_of(module: str) -> str | None:
    """``synthflow.<package>`` for a module of a subpackage, else the top-level module."""
    parts = module.split(".")
    if len(parts) < 2:
        return None  # synthflow/__init__.py
    return ".".join(parts[:2])


def test_few_long_modules_and_each_says_why_it_stays_whole():
    long = {
        name: path for name, path in _modules().items() if len(path.read_text().splitlines()) > LONG
    }
    # A criterion kind's module holds the kind whole ([shape]): its statistic, sensitivity,
    # exact value, DP release and report section. Those may be long; the rest stay few.
    kinds = {type(k).__module__ for k in KINDS.values()}
    assert len(set(long) - kinds) <= MAX_LONG_MODULES, sorted(set(long) - kinds)
    for name, path in long.items():
        assert "Kept whole:" in (ast.get_docstring(ast.parse(path.read_text())) or ""), name


# Where a ledger may be opened or randomness built outside the job layer, and why. The
# job layer (synthflow/jobs/, through open_job) opens them for every computation on data;
# privacy/ledger.py and privacy/rng.py define them.
OPENS_OUTSIDE_JOBS = {
    # open_job and its rules (a CSPRNG, or a seed on public data only; the dataset's
    # ledger for private data): the one place every job opens them, below the job layer
    # (synthflow.jobs re-exports it) so that the release job calls it without importing
    # the layer above it ([stages]).
    "synthflow._job_open": {"Ledger", "command_ledger"},
    "synthflow._job_rules": {"PrivacyRNG.secure", "PrivacyRNG.from_seed"},
    # The release job (run_release): its data, randomness and the dataset's ledger come
    # from open_job; it opens the selection's own ledger in its enclave (--private-dir).
    "synthflow.release.job": {"Ledger"},
    # Seeded noise on public figures (no data read): the planner's and the noise rule's
    # simulations draw with the release's own Laplace sampler so they match it.
    "synthflow.plan.simulate": {"PrivacyRNG.from_seed"},
    "synthflow.criteria.regression.sim": {"PrivacyRNG.from_seed"},
}


def _opens(tree: ast.AST) -> set[str]:
    """Constructors of ledgers and randomness called in a module."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in {"Ledger", "PrivacyRNG", "dataset_ledger", "command_ledger"} or (
            name.startswith("PrivacyRNG.") and name.split(".")[1] in {"secure", "from_seed"}
        ):
            found.add(name)
    return found


def test_only_the_job_layer_opens_a_ledger_or_builds_randomness():
    opened = {}
    for name, path in _modules().items():
        if name.startswith("synthflow.jobs") or name in {
            "synthflow.privacy.ledger",
            "synthflow.privacy.rng",
        }:
            continue
        calls = _opens(ast.parse(path.read_text()))
        if calls:
            opened[name] = calls
    assert opened == OPENS_OUTSIDE_JOBS
    # The probe finds what it looks for: open_job opens both (the walk above found them).
    assert {"Ledger", "command_ledger"} <= opened["synthflow._job_open"]


def test_each_long_function_says_why_at_its_top():
    # [shape]: no function over 80 lines without a one-line reason ("# Long: ...") right
    # after its signature or docstring.
    missing = []
    for name, path in _modules().items():
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.end_lineno - node.lineno + 1 <= LONG_FUNCTION:
                continue
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            top = first.end_lineno if docstring else first.lineno - 2  # 0-based: the line above
            if not lines[top].strip().startswith("# Long: "):
                missing.append(f"{name}.{node.name}")
    assert missing == []


MAX_LONG_FUNCTIONS = 10


def test_at_most_ten_functions_over_eighty_lines():
    # [stages] (#62): long functions are split into named steps; the few left (each
    # saying why at its top, above) stay few. Lines of a def to its last line, its
    # decorators left out; nested functions count on their own too.
    long = sorted(
        f"{name}.{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > LONG_FUNCTION
    )
    assert len(long) <= MAX_LONG_FUNCTIONS, "\n".join(long)


def _prints(tree: ast.Module) -> list[int]:
    """Lines of ``print(...)`` calls, those under ``if __name__ == "__main__":`` left out."""
    main_blocks = [
        n
        for n in tree.body
        if isinstance(n, ast.If)
        and isinstance(n.test, ast.Compare)
        and isinstance(n.test.left, ast.Name)
        and n.test.left.id == "__name__"
    ]
    skipped = {id(x) for b in main_blocks for x in ast.walk(b)}
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "print"
        and id(n) not in skipped
    ]


def test_only_the_cli_prints():
    # [shape]: a job tells its user through synthflow._util.notices.say (a logger with its
    # own stderr handler, which a library user can silence); cli/ parses and prints.
    found = {
        name: _prints(ast.parse(path.read_text()))
        for name, path in _modules().items()
        if not name.startswith("synthflow.cli")
    }
    assert {k: v for k, v in found.items() if v} == {}
    # The probe finds what it looks for: the CLI prints.
    assert any(_prints(ast.parse(p.read_text())) for n, p in _modules().items() if ".cli" in n)
