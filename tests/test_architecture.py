"""The shape of `pbem/` (docs/architecture.md): layers import only downward, no loops, short modules.

The import graph is read from the source with `ast`, counting every import
statement wherever it stands, so an import inside a function cannot hide a
loop. Each check is a function of a source tree, so the tests at the end can
show it failing on a small tree built to break it.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.rules.turn import PHASE_IDS

ROOT = Path(__file__).resolve().parent.parent / "pbem"
MAX_LINES = 600

#: Which top-level packages of pbem each package may import (DESIGN.md §2).
PACKAGES: dict[str, set[str]] = {
    "pbem.shipped": set(),
    "pbem.spool": set(),
    "pbem.escaping": set(),
    "pbem.rules": set(),
    "pbem.picture": {"pbem.rules", "pbem.escaping"},
    "pbem.orders": {"pbem.rules"},
    "pbem.store": {"pbem.rules", "pbem.shipped"},
    "pbem.mail": {"pbem.rules", "pbem.orders", "pbem.shipped", "pbem.spool", "pbem.escaping"},
    "pbem.audit": {"pbem.rules", "pbem.store", "pbem.escaping"},
    "pbem.service": {
        "pbem.rules", "pbem.orders", "pbem.store", "pbem.mail", "pbem.audit", "pbem.picture", "pbem.spool", "pbem.escaping",
    },
    "pbem.cli": {
        "pbem.rules", "pbem.orders", "pbem.store", "pbem.mail", "pbem.audit", "pbem.service", "pbem.picture",
        "pbem.spool", "pbem.escaping", "pbem.web",
    },
    # The web is an entry point beside the command line (DESIGN.md §5b): the same use cases, over HTTP.
    "pbem.web": {
        "pbem.rules", "pbem.store", "pbem.mail", "pbem.audit", "pbem.service", "pbem.picture", "pbem.escaping",
    },
    # The `pbem` command's first step: the spool (pbem.spool) or the whole CLI, loaded only when needed.
    "pbem.launcher": {"pbem.service", "pbem.spool", "pbem.cli"},
    "pbem.__main__": {"pbem.launcher"},
}

#: The layers inside pbem.rules, bottom first: a module imports only its own layer or lower ones.
RULES_LAYERS: tuple[tuple[str, ...], ...] = (
    ("pbem.rules.core",),
    ("pbem.rules.ruleset",),
    ("pbem.rules.board",),
    ("pbem.rules.phases",),
    ("pbem.rules.turn", "pbem.rules.table", "pbem.rules.ledger"),
    ("pbem.rules.engine",),
    ("pbem.rules.branches",),
    ("pbem.rules.narration", "pbem.rules.view", "pbem.rules.invariants"),
)

#: Packages whose members must not import one another: each phase stands alone,
#: and so does each calamity family (they share only what lies below them).
SIBLINGS_APART: dict[str, tuple[str, ...]] = {
    "pbem.rules.phases": (),  # every phase module or package
    "pbem.rules.phases.calamities": ("nature", "war", "barbarians", "plagues", "unrest", "seizure"),
}

#: Modules allowed to import inside a function: the command line loads what a
#: subcommand needs only when it runs (start-up time of `pbem ingest`).
LAZY_IMPORTS_ALLOWED = ("pbem.cli", "pbem.launcher")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    local: bool  # inside a function or class body


def modules(root: Path) -> dict[str, Path]:
    package = root.name
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(root: Path) -> list[Import]:
    """Every import of a module of the tree by another, with `from pkg import mod` as an import of both."""
    known = modules(root)
    out: list[Import] = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(node.level - 1, 0)):
                    base = base.rsplit(".", 1)[0]
                target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
                candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            for candidate in candidates:
                if candidate in known and candidate != name:
                    out.append(Import(name, candidate, node.lineno, id(node) not in top))
    return out


def loops(root: Path) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root)}
    for imp in imports(root):
        graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _package_of(module: str) -> str | None:
    return next((p for p in PACKAGES if _under(module, p)), None)


def _rules_layer(module: str) -> int | None:
    for rank, members in enumerate(RULES_LAYERS):
        if any(_under(module, m) for m in members):
            return rank
    return None


def _sibling(module: str, package: str) -> str | None:
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".")[0]


def upward_imports(root: Path) -> list[str]:
    """Imports that break a layer rule, one sentence each."""
    problems = []
    for imp in imports(root):
        if modules(root)[imp.target].name == "__init__.py" and _under(imp.source, imp.target):
            continue  # a module's own package (its __init__ holds a docstring only: checked by loops)
        source_pkg, target_pkg = _package_of(imp.source), _package_of(imp.target)
        if source_pkg and target_pkg and source_pkg != target_pkg and target_pkg not in PACKAGES[source_pkg]:
            problems.append(f"{imp.source} (line {imp.line}) imports {imp.target}: {source_pkg} may not import {target_pkg}")
        low, high = _rules_layer(imp.source), _rules_layer(imp.target)
        if low is not None and high is not None and high > low:
            problems.append(f"{imp.source} (line {imp.line}) imports {imp.target}, a layer above it")
        for package, members in SIBLINGS_APART.items():
            a, b = _sibling(imp.source, package), _sibling(imp.target, package)
            if a and b and a != b and (not members or (a in members and b in members)):
                problems.append(f"{imp.source} (line {imp.line}) imports {imp.target}: siblings in {package} stand apart")
    return problems


def hidden_imports(root: Path) -> list[str]:
    return [
        f"{imp.source} (line {imp.line}) imports {imp.target} inside a function"
        for imp in imports(root)
        if imp.local and not _under(imp.source, imp.target) and not any(_under(imp.source, m) for m in LAZY_IMPORTS_ALLOWED)
    ]


#: The variant options, by the field `Options` reads them into and by their KEY=VALUE name.
VARIANT_FIELDS = frozenset({"small_cities", "no_trading"})
VARIANT_KEYS = frozenset({"variant-small-cities", "variant-no-trading"})
#: Where a variant may be named: the ruleset package, which loads the data, types the options and chooses the
#: parts (`ruleset/parts.py`) every other module asks (docs/architecture.md, "Where a variant plugs in").
VARIANTS_CHOSEN_IN = ("pbem.rules.ruleset",)
#: Modules not yet converted to ask the parts: empty, and to stay so.
VARIANT_TESTS_ALLOWED: frozenset[str] = frozenset()


def variant_tests(root: Path) -> list[str]:
    """Every read of a variant option outside the ruleset: ``x.small_cities``, ``x.no_trading`` or an option key."""
    out = []
    for name, path in modules(root).items():
        if any(_under(name, m) for m in VARIANTS_CHOSEN_IN) or name in VARIANT_TESTS_ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in VARIANT_FIELDS:
                out.append(f"{name} (line {node.lineno}) reads the variant option .{node.attr}")
            elif isinstance(node, ast.Constant) and node.value in VARIANT_KEYS:
                out.append(f"{name} (line {node.lineno}) names the variant option {node.value}")
    return out


def long_modules(root: Path) -> list[str]:
    out = []
    for name, path in modules(root).items():
        count = len(path.read_text().splitlines())
        if count > MAX_LINES:
            out.append(f"{name}: {count} lines")
    return out


# -- the checks on pbem/ ---------------------------------------------------------------------


def test_no_import_loop_anywhere_in_pbem():
    assert loops(ROOT) == []


def test_every_import_goes_down_the_layers():
    assert upward_imports(ROOT) == []


def test_no_import_is_hidden_inside_a_function():
    assert hidden_imports(ROOT) == []


def test_no_module_is_over_600_lines():
    assert long_modules(ROOT) == []


def test_no_module_tests_a_variant_option_by_name():
    """A phase asks the game's parts (`rulebook.parts_of`); only the ruleset chooses them from the options (issue 34)."""
    assert variant_tests(ROOT) == []


def test_every_rules_module_sits_in_a_layer():
    loose = [m for m in modules(ROOT) if _under(m, "pbem.rules") and m != "pbem.rules" and _rules_layer(m) is None]
    assert loose == []


# -- the checks fail when they should ----------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pbem"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_loop_through_a_function_local_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "rules/__init__.py": "",
        "rules/turn.py": "def f():\n    from pbem.rules import narration\n",
        "rules/narration.py": "from pbem.rules.turn import f\n",
    })
    assert loops(root) == [["pbem.rules.narration", "pbem.rules.turn"]]
    assert hidden_imports(root) == ["pbem.rules.turn (line 2) imports pbem.rules.narration inside a function"]


def test_a_package_importing_its_own_module_back_is_a_loop(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "orders/__init__.py": "from .language import parse\n",
        "orders/language.py": "from . import tax\ndef parse(): pass\n",
        "orders/tax.py": "",
    })
    assert loops(root) == [["pbem.orders", "pbem.orders.language"]]


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"rules/core/state.py": "from pbem.rules.phases.tax import x\n", "rules/phases/tax.py": "x = 1\n"},
         "pbem.rules.core.state (line 1) imports pbem.rules.phases.tax, a layer above it"),
        ({"rules/phases/ast.py": "from pbem.rules.phases.advances import x\n", "rules/phases/advances.py": "x = 1\n"},
         "pbem.rules.phases.ast (line 1) imports pbem.rules.phases.advances: siblings in pbem.rules.phases stand apart"),
        ({"rules/phases/calamities/war.py": "from pbem.rules.phases.calamities.nature import x\n",
          "rules/phases/calamities/nature.py": "x = 1\n"},
         "pbem.rules.phases.calamities.war (line 1) imports pbem.rules.phases.calamities.nature: "
         "siblings in pbem.rules.phases.calamities stand apart"),
        ({"rules/phases/tax.py": "from pbem.rules.engine import x\n", "rules/engine.py": "x = 1\n"},
         "pbem.rules.phases.tax (line 1) imports pbem.rules.engine, a layer above it"),
        ({"rules/state.py": "from pbem.store.events import x\n", "store/events.py": "x = 1\n"},
         "pbem.rules.state (line 1) imports pbem.store.events: pbem.rules may not import pbem.store"),
    ],
)
def test_an_upward_import_is_named(tmp_path, files, problem):
    package_inits = {str(Path(f).parent / "__init__.py"): "" for f in files}
    root = _tree(tmp_path, {"__init__.py": "", "rules/__init__.py": "", **package_inits, **files})
    assert upward_imports(root) == [problem]


def test_a_long_module_is_named(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "rules/__init__.py": "", "rules/engine.py": "x = 1\n" * 601})
    assert long_modules(root) == ["pbem.rules.engine: 601 lines"]


def test_a_variant_option_read_by_a_phase_is_named(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "rules/__init__.py": "",
        "rules/ruleset/__init__.py": "",
        "rules/ruleset/parts.py": "def parts_for(options):\n    return options.small_cities\n",
        "rules/phases/__init__.py": "",
        "rules/phases/tax.py": "def f(o, d):\n    return o.no_trading or d.get('variant-small-cities')\n",
    })
    assert variant_tests(root) == [
        "pbem.rules.phases.tax (line 2) reads the variant option .no_trading",
        "pbem.rules.phases.tax (line 2) names the variant option variant-small-cities",
    ]


# -- the page that maps it ----------------------------------------------------------------------


def test_the_architecture_page_leads_from_each_phase_to_its_rules():
    """docs/architecture.md names, for every phase of the turn, the module whose RULES play it."""
    page = (ROOT.parent / "docs" / "architecture.md").read_text()
    for phase in ("setup", *PHASE_IDS):
        row = next((line for line in page.splitlines() if line.startswith(f"| `{phase}`")), None)
        assert row is not None, f"no row for phase {phase}"
        path = re.search(r"`(phases/[\w/]+?)(?:\.py|/)?`", row)
        assert path is not None, row
        module = importlib.import_module("pbem.rules." + path.group(1).replace("/", "."))
        assert module.RULES.name == phase


def test_the_architecture_page_names_every_rules_module_and_nothing_else():
    page = (ROOT.parent / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([\w/]+?)(?:\.py)?`", page))
    rules = ROOT / "rules"
    for path in rules.rglob("*.py"):
        if path.name == "__init__.py":
            continue
        stem = path.relative_to(rules).with_suffix("").as_posix()
        assert stem in named or path.stem in named, f"{stem} is not on docs/architecture.md"
    for mention in re.findall(r"`((?:core|ruleset|board|phases)/[\w/]+?\.py)`", page):
        assert (rules / mention).exists(), f"docs/architecture.md names {mention}, which does not exist"
