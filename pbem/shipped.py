"""Where the files that live beside the package are: `migrations/`, `templates/`, `alembic.ini`.

In a source checkout (and an editable install) they are at the top of the
repository, beside `pbem/`; an installed wheel carries copies in
`pbem/_shipped/` (see setup.py). The packaged copy wins when it exists, so
an installed `pbem` works from any directory.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped(name: str) -> Path:
    """The path of ``name`` (``migrations``, ``templates`` or ``alembic.ini``) for this installation."""
    packaged = _PACKAGE / "_shipped" / name
    return packaged if packaged.exists() else _PACKAGE.parent / name
