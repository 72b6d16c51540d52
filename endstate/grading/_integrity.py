"""The end-state checks every task gets, whatever its graders: `end_state`.

They fail a run whose end state reaches past what it is graded on:

- a symlink that leads (directly or through other links) out of the workspace:
  the graded tree would depend on files outside it;
- compiled code added or changed (`.so`, `.pyd`, ELF or Mach-O bytes): an
  extension module imports before a `.py` of the same name;
- source files the agent changed that gained references to the test runner's
  internals or to the interpreter's frames, import machinery and tracing: the
  shapes in-process tampering with a test run takes. Counted against the
  fixture's copy, so a project that already used them is not penalised. Only
  code counts: the scan reads Python's tokens, and comments, docstrings and
  string literals are blanked first, so a fix whose comment mentions
  `unittest.mock` or `sys.modules` is not a hit. The test runners' own names
  (`pytest`, `unittest`, `doctest`) do not count inside a module's
  `if __name__ == "__main__":` block, which a test process never runs: a library
  that runs its doctests when executed as a script is not reaching into a test run.
  Anything that could run such a block on import (a `"__main__"` anywhere else in
  the changed code, `runpy`, rebinding `__name__`) takes that exemption away.

This scan is a tripwire, not a proof: code can be obfuscated past any list of
names (a name spelled in a string is, by the rule above, not a hit). A hit still
fails the run: a library fix has no use for these names in code, and the visible
test run has no twins. What carries the weight against the obfuscated forms is
the impossible twins of every held-out run (see `_twins.py`); the guard inside
the test run (`harness/endstate_guard.py`) and the canary watch the run itself.
docs/threat-model.md says what remains possible.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from endstate.grading._verdict import Verdict
from endstate.sandbox import SealedSandbox
from endstate.task import is_test_file, parse_python

__all__ = ["end_state", "SOURCE_TRIPWIRES", "TEST_FILE_TRIPWIRES", "is_test_file", "code_only"]

#: In non-test source: names a library fix has no business adding.
SOURCE_TRIPWIRES = re.compile(
    r"""(?x)
    \b_pytest\b | \bpytest\b | \bpluggy\b | \bTestReport\b | \bCallInfo\b | \bmakereport\b | \bruntest\b
  | \bhookimpl\b | \bhookwrapper\b | \bpytest_plugins\b | \bjunit | \bconftest\b | \bPYTEST_
  | \btests_holdout\b | \bunittest\b | \bdoctest\b
  | \bsys\s*\.\s*modules\b | \bmeta_path\b | \bpath_hooks\b | \bsettrace\b | \bsetprofile\b
  | \b_getframe\b | \bf_back\b | \bf_locals\b | \bf_globals\b | \bco_consts\b | \bget_referrers\b
  | \bcurrentframe\b | \binspect\s*\.\s*stack\b | \b__import__\b | \bbuiltins\b | \b__builtins__\b
  | \batexit\b | \bos\s*\.\s*_exit\b | \bctypes\b | \bmarshal\b | \brunpy\b
  | (?<![\w.])exec\s*\( | (?<![\w.])eval\s*\( | (?<![\w.])compile\s*\( | \bco_filename\b
    """
)

#: In test files (which feature tasks may add): only what reaches into the runner's reporting.
TEST_FILE_TRIPWIRES = re.compile(
    r"""(?x)
    \b_pytest\b | \bpluggy\b | \bTestReport\b | \bCallInfo\b | \bmakereport\b | \bhookimpl\b | \bhookwrapper\b
  | \bpytest_plugins\b | \bpytest_runtest_\w+ | \bpytest_collection\w* | \bjunit | \bsys\s*\.\s*modules\s*\[
  | \bmeta_path\b | \bsettrace\b | \bsetprofile\b | \batexit\b | \bos\s*\.\s*_exit\b
    """
)

_COMPILED_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")
_COMPILED_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")


#: Tokens that are not code: what they say is never a tripwire hit.
_NOT_CODE = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _is_fstring(token: tokenize.TokenInfo) -> bool:
    """An f-string as one STRING token (before Python 3.12): its fields are code, so it is kept whole."""
    return token.type == tokenize.STRING and "f" in token.string.split("'")[0].split('"')[0].lower()


def code_only(text: str) -> str:
    """`text` with every comment and string literal (docstrings included) blanked to spaces,
    line breaks and positions kept. Text that does not tokenize as Python is left whole."""
    lines = io.StringIO(text).readlines()  # the lines tokenize reads, so positions agree
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    chars = list(text)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _NOT_CODE and not _is_fstring(token):
                begin = starts[token.start[0] - 1] + token.start[1]
                end = starts[token.end[0] - 1] + token.end[1]
                for i in range(begin, end):
                    if chars[i] != "\n":
                        chars[i] = " "
    except (tokenize.TokenError, SyntaxError, IndexError):
        return text
    return "".join(chars)


#: The test runners' module names: in a `__main__` block they are a script running its own tests.
_RUNNER_NAMES = frozenset({"pytest", "unittest", "doctest"})


def _is_main_test(node: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return False
    sides = [node.left, node.comparators[0]]
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))


def main_block_lines(text: str) -> set[int] | None:
    """Lines of the body of each top-level `if __name__ == "__main__":` (never its `else`); None
    when the module could make such a block run on import, or run another module's: `__name__`
    rebound, or `__main__` written anywhere but in such a test (a string, `import __main__`)."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # nested past what the parser takes: no module
        return None if "__main__" in text else set()
    guards = [n for n in tree.body if isinstance(n, ast.If) and _is_main_test(n.test)]
    mains = sum(isinstance(n, ast.Constant) and isinstance(n.value, str) and "__main__" in n.value
                for n in ast.walk(tree))
    rebound = any(isinstance(n, ast.Name) and n.id == "__name__" and not isinstance(n.ctx, ast.Load)
                  for n in ast.walk(tree))
    if rebound or mains != len(guards) or "__main__" in code_only(text):
        return None
    return {line for g in guards for line in range(g.body[0].lineno, (g.body[-1].end_lineno or 0) + 1)}


def _tripwires(pattern: re.Pattern[str], text: str, *, main_exempt: bool = False) -> dict[str, int]:
    counts: dict[str, int] = {}
    code = code_only(text)
    exempt = (main_block_lines(text) or set()) if main_exempt else set()
    for match in pattern.finditer(code):
        key = re.sub(r"\s+", "", match.group(0)).rstrip("(")
        if key in _RUNNER_NAMES and code.count("\n", 0, match.start()) + 1 in exempt:
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


def _gained(sandbox: SealedSandbox, path: str, *, main_exempt: bool) -> list[str]:
    pattern = TEST_FILE_TRIPWIRES if is_test_file(path) else SOURCE_TRIPWIRES
    after = _tripwires(pattern, sandbox.read_text(path), main_exempt=main_exempt)
    before = _tripwires(pattern, sandbox.fixture_text(path)) if sandbox.fixture_exists(path) else {}
    return sorted(name for name, count in after.items() if count > before.get(name, 0))


def _loads_as_main(sandbox: SealedSandbox, paths: list[str]) -> bool:
    """Whether changed code names `__main__` other than in a main-block test: a way to run one on import."""
    return any(main_block_lines(sandbox.read_text(p)) is None for p in paths)


def end_state(sandbox: SealedSandbox, *, scan_source: bool = True) -> Verdict:
    """The end state holds nothing that reaches past the graded tree or into the test run.
    `scan_source` False: the graded tree is the test runner itself (`LogRunner.is_the_tree`), whose
    changed source is not scanned for the runner's names; links and compiled code still are."""
    escaping = sandbox.escaping_links()
    if escaping:
        return Verdict.fail(f"symlinks lead out of the workspace: {', '.join(escaping[:5])}")
    changed = [p for p in sandbox.changed_paths() if sandbox.exists(p) and not sandbox.is_link(p)]
    compiled = [p for p in changed
                if p.endswith(_COMPILED_SUFFIXES) or sandbox.read_bytes(p)[:4].startswith(_COMPILED_MAGIC)]
    if compiled:
        return Verdict.fail(f"compiled code added or changed: {', '.join(compiled[:5])}")
    reaching = []
    sources = [p for p in changed if p.endswith(".py")] if scan_source else []
    main_exempt = not _loads_as_main(sandbox, sources)
    for path in sources:
        gained = _gained(sandbox, path, main_exempt=main_exempt)
        if gained:
            reaching.append(f"{path} (+{', +'.join(gained[:6])})")
    if reaching:
        return Verdict.fail("changed source reaches into the test runner or the interpreter's internals: "
                            + "; ".join(reaching[:5]))
    return Verdict.ok()
