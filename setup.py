"""The wheel carries the repository's top-level `migrations/`, `templates/` and `alembic.ini`.

They stay at the top of the repository, where alembic and the template
authors expect them; at build time they are copied into the package as
`pbem/_shipped/`, which the code looks in first (`pbem.shipped`). An
editable install and a source checkout read them where they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SHIPPED = ("migrations", "templates", "alembic.ini")


class BuildWithShipped(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "pbem" / "_shipped"
        for name in SHIPPED:
            source = HERE / name
            destination = target / name
            if source.is_dir():
                shutil.copytree(source, destination, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, destination)


setup(cmdclass={"build_py": BuildWithShipped})
