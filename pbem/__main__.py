"""`python -m pbem`: the same as the `pbem` command, fast path for `pbem ingest` included (pbem/launcher.py)."""

from pbem.launcher import main

main()
