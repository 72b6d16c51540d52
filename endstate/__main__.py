"""`python -m endstate` is the `endstate` command."""

from endstate.cli import main

main()
