"""The package's shape stays as [criteria] left it: criteria dispatched by their kind
objects, an acyclic import graph, few long modules, each saying why."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from synthflow.criteria import KINDS

PACKAGE = Path(__file__).resolve().parents[2] / "synthflow"
MAX_LONG_MODULES = 8
LONG = 300
LONG_FUNCTION = 80


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
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


def test_the_import_graph_has_no_cycle_even_through_imports_inside_functions():
    # (A cycle through a package's __init__ broke ``import synthflow.criteria`` in a
    # fresh interpreter while every test, importing synthflow.config first, passed.)
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = nx.DiGraph()
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            for target in targets:
                found = resolve(target)
                # Importing a.b.c runs a/__init__ and a/b/__init__ first: edges to those
                # packages too (but not to the importer's own packages, already running).
                while found:
                    if found != name and not name.startswith(found + "."):
                        graph.add_edge(name, found)
                    found = found.rpartition(".")[0] if "." in found else ""
    assert graph.number_of_edges() > 300  # the walk found the imports
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []
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
# ledger.py and rng.py define them.
OPENS_OUTSIDE_JOBS = {
    # Seeded noise on public figures (no data read): the planner's and the noise rule's
    # simulations draw with the release's own Laplace sampler so they match it.
    "synthflow.plan.simulate": {"PrivacyRNG.from_seed"},
    "synthflow.criteria.regression_sim": {"PrivacyRNG.from_seed"},
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
        if name.startswith("synthflow.jobs") or name in {"synthflow.ledger", "synthflow.rng"}:
            continue
        calls = _opens(ast.parse(path.read_text()))
        if calls:
            opened[name] = calls
    assert opened == OPENS_OUTSIDE_JOBS
    # The probe finds what it looks for: the jobs open both.
    jobs = set().union(
        *(_opens(ast.parse(p.read_text())) for n, p in _modules().items() if "jobs" in n)
    )
    assert {"Ledger", "command_ledger"} <= jobs


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
    # [shape]: a job tells its user through synthflow._notices.say (a logger with its
    # own stderr handler, which a library user can silence); cli/ parses and prints.
    found = {
        name: _prints(ast.parse(path.read_text()))
        for name, path in _modules().items()
        if not name.startswith("synthflow.cli")
    }
    assert {k: v for k, v in found.items() if v} == {}
    # The probe finds what it looks for: the CLI prints.
    assert any(_prints(ast.parse(p.read_text())) for n, p in _modules().items() if ".cli" in n)
