"""The command line: parse, call one library function, print.

`_main` holds the commands; `_errors` how one ends on an error; `_run` what `eval` and
`record` share (options, run configuration, the repeat and exit-code policy).
"""

from endstate.cli._main import main

__all__ = ["main"]
