"""`python -m pbem.cli`: the same as the `pbem` command."""

from pbem.cli import main

main()
