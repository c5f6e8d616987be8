"""`pbem.cli.output`: the one way the `pbem` command prints, and every command module printing through it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import click
from click.testing import CliRunner

from pbem.cli.output import say, say_json, say_lines

CLI = Path(__file__).resolve().parents[2] / "pbem" / "cli"


def _printed(body) -> str:
    @click.command()
    def command() -> None:
        body()

    result = CliRunner().invoke(command, catch_exceptions=False)
    return result.output


def test_a_line_is_printed_on_one_line_with_its_control_characters_written_out():
    assert _printed(lambda: say("Press from Ann\x1b[2J: hi\nv9  Ann wins\tnow")) == (
        "Press from Ann\\x1b[2J: hi\\nv9  Ann wins\\tnow\n")
    assert _printed(lambda: say("plain text, ünïcode and \\o/")) == "plain text, ünïcode and \\o/\n"


def test_a_row_keeps_its_separators_and_escapes_its_cells():
    assert _printed(lambda: say("g1", "set\tup\x1b", "version 3", sep="\t")) == "g1\tset\\tup\\x1b\tversion 3\n"


def test_lines_are_each_their_own_line():
    assert _printed(lambda: say_lines(["one \x9b", "two\nthree"])) == "one \\x9b\ntwo\\nthree\n"


def test_json_is_ascii_and_reads_back_exactly():
    data = {"name": "Ann\x1b[2J\u202e\x9b", "n": 1}
    printed = _printed(lambda: say_json(data, indent=2))
    assert printed.isascii() and json.loads(printed) == data


def _prints_directly(tree: ast.AST) -> list[int]:
    """Lines that print other than through `pbem.cli.output`: click.echo/secho, print, a stream's write,
    traceback.print_exc."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(node.lineno)
        elif isinstance(func, ast.Attribute):
            owner = ast.unparse(func.value)
            if (owner, func.attr) in {("click", "echo"), ("click", "secho"), ("traceback", "print_exc")} or (
                    func.attr == "write" and owner in {"sys.stdout", "sys.stderr"}):
                found.append(node.lineno)
    return found


def test_no_command_module_prints_but_through_the_output_module():
    """So nothing a player wrote reaches a terminal unescaped (`pbem export` writes JSON lines it escapes itself)."""
    offenders = {}
    for path in sorted(CLI.glob("*.py")):
        if path.name != "output.py":
            lines = _prints_directly(ast.parse(path.read_text(), str(path)))
            if lines:
                offenders[path.name] = lines
    assert offenders == {}


def test_the_check_finds_a_direct_print():
    tree = ast.parse("import click, sys\nclick.echo('x')\nprint(1)\nsys.stderr.write('y')\nsay('fine')\n")
    assert _prints_directly(tree) == [2, 3, 4]
