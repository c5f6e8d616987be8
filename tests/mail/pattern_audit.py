"""Every regular expression that reads untrusted text, and the inputs that would make it slow.

The readers of a message (`pbem/mail/`, `pbem/orders/`, `pbem/service/`)
use patterns compiled at module level, alone or in lists, and a few written
inline (``re.split(r"[,;]", text)``). `patterns` finds them all: the module
constants by importing each module, the inline ones by reading its source.
`attacks` builds, for one pattern, the inputs that make a backtracking
pattern slow: a long run of one character the pattern may take (each of the
characters and words it names, blanks, newlines, digits), between the words
it starts with and a character that makes it give up. docs/mail.md lists
every pattern with the reason it is linear; `tests/mail/test_patterns.py`
holds the list to the code, and times every pattern on its attacks.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:  # the parser of the re module: its name changed in Python 3.11
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

import pbem

#: The packages whose patterns read what strangers and players write.
PACKAGES = ("pbem.mail", "pbem.orders", "pbem.service")
ROOT = Path(pbem.__file__).resolve().parent.parent
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "split", "sub", "subn", "findall", "finditer"}


@dataclass(frozen=True)
class Found:
    """One pattern: where it is (``pbem/mail/inbound.py:_ANGLE_RE``, or the file and the inline pattern's line)."""

    where: str
    pattern: re.Pattern


def _modules() -> Iterator[str]:
    for package in PACKAGES:
        module = importlib.import_module(package)
        yield package
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            yield info.name


def _file_of(module_name: str) -> str:
    module = importlib.import_module(module_name)
    return str(Path(module.__file__).resolve().relative_to(ROOT))


def _constants(module_name: str) -> Iterator[Found]:
    module = importlib.import_module(module_name)
    path = _file_of(module_name)
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern) and getattr(module, "__name__", "") == module_name:
            if _defined_here(module, name):
                yield Found(f"{path}:{name}", value)
        elif isinstance(value, (list, tuple)) and _defined_here(module, name):
            items = [v[0] if isinstance(v, tuple) and v and isinstance(v[0], re.Pattern) else v for v in value]
            for i, item in enumerate(items):
                if isinstance(item, re.Pattern):
                    yield Found(f"{path}:{name}[{i}]", item)


def _defined_here(module, name: str) -> bool:
    """Whether ``name`` is assigned in the module's own source (not imported from another module)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _flags(node: ast.Call) -> int:
    flags = 0
    for value in [*node.args[2:], *(k.value for k in node.keywords if k.arg == "flags")]:
        for part in ast.walk(value):
            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "re":
                flags |= getattr(re, part.attr, 0) if isinstance(getattr(re, part.attr, 0), int) else 0
    return flags


def _inline(module_name: str) -> Iterator[Found]:
    """Patterns written as a literal in a call of the re module other than a module constant's compile."""
    path = _file_of(module_name)
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    top_compiles = {  # the constants' own compile calls, also inside a module-level list
        id(call)
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
        for call in ast.walk(node.value)
        if isinstance(call, ast.Call)
    }
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.func.attr in _RE_FUNCTIONS):
            continue
        if id(node) in top_compiles or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        source = node.args[0].value
        if not isinstance(source, (str, bytes)):
            continue
        flags = _flags(node) if node.func.attr != "compile" else 0
        if node.func.attr == "compile" and len(node.args) > 1:
            flags = _flags(ast.Call(func=node.func, args=[node.args[0], node.args[0], *node.args[1:]], keywords=[]))
        yield Found(f"{path}:{node.lineno}", re.compile(source, flags))


def patterns() -> list[Found]:
    """Every pattern of `PACKAGES`, constants first, each once."""
    found: list[Found] = []
    seen: set[str] = set()
    for module_name in _modules():
        for item in [*_constants(module_name), *_inline(module_name)]:
            if item.where not in seen:
                seen.add(item.where)
                found.append(item)
    return found


def _pieces(pattern: re.Pattern) -> tuple[set[str], set[str]]:
    """The characters and the words ``pattern`` names literally."""
    chars: set[str] = set()
    words: set[str] = set()

    def walk(items, word: list[str]) -> None:
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                word.append(chr(av))
                chars.add(chr(av))
                continue
            if word:
                words.add("".join(word))
                word.clear()
            if name == "SUBPATTERN":
                walk(av[-1], [])
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                walk(av[2], [])
            elif name == "ATOMIC_GROUP":
                walk(av, [])
            elif name == "BRANCH":
                for branch in av[1]:
                    inner: list[str] = []
                    walk(branch, inner)
                    if inner:
                        words.add("".join(inner))
            elif name == "IN":
                for o, a in av:
                    kind = str(o)
                    if kind == "LITERAL":
                        chars.add(chr(a))
                    elif kind == "RANGE":
                        chars.add(chr(a[0]))
                    elif kind == "CATEGORY":
                        chars.add({"CATEGORY_DIGIT": "1", "CATEGORY_SPACE": " "}.get(str(a), "a"))
            elif name in ("ASSERT", "ASSERT_NOT"):
                walk(av[1], [])
        if word:
            words.add("".join(word))
            word.clear()

    source = pattern.pattern
    if isinstance(source, bytes):
        source = source.decode("latin-1")
    walk(sre_parse.parse(source, pattern.flags & ~re.UNICODE if isinstance(pattern.pattern, bytes) else pattern.flags), [])
    return chars, words


def attacks(pattern: re.Pattern, size: int) -> list[str]:
    """Inputs of about ``size`` characters that make a backtracking ``pattern`` slow, if anything does."""
    chars, words = _pieces(pattern)
    atoms = sorted(chars | {" ", "\t", "\n", "a", "1", ":", "-", ">", "<", "@"})
    starts = sorted(w for w in words if w.strip())[:12]
    out: list[str] = []
    for atom in atoms:
        out.append(atom * size)
        out.append("x" + atom * size + "!")
        for word in starts[:8]:
            out.append(word + atom * size + "!")
            out.append(word + " x" + atom * size + "y")
            out.append(word + "\n" + atom * size)
    for a, b in itertools.combinations(atoms, 2):
        out.append((a + b) * (size // 2))
    for word in starts:
        out.append((word + " ") * (size // (len(word) + 1)))
        out.append((word + "\n") * (size // (len(word) + 1)))
        out.append(word + "\n" * size + "x")
    return out


def slowest(found: Found, size: int) -> tuple[float, str]:
    """The most CPU time any use of the pattern takes on one of its attacks (seconds), and that attack's start."""
    pattern = found.pattern
    worst, which = 0.0, ""
    for text in attacks(pattern, size):
        subject = text.encode("utf-8") if isinstance(pattern.pattern, bytes) else text
        started = time.process_time()  # the CPU the pattern took: waiting for a busy machine's cores is not its cost
        pattern.search(subject)
        pattern.match(subject)
        for _ in itertools.islice(pattern.finditer(subject), 10_000):
            pass
        took = time.process_time() - started
        if took > worst:
            worst, which = took, text[:24]
    return worst, which
