"""A SWE-bench dataset's records as instances: each decoded and its test ids read, the bad ones named.

`read_instances` takes the records of a dataset (`_swebenchdata`) that a slice keeps and gives each
as an `Instance`, or as a `Skipped` naming its place, its field and what is wrong with it. The test
lists are read as each repository's runner names its tests (`_testcommand.runner_ids`); from
PASS_TO_PASS, what SWE-bench's log parser read as a test from a line that names none (`[100%]`) is
left out (`log_fragments` says which, for the task to say so).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from endstate.authoring._swebenchdata import Selection, dataset_records
from endstate.authoring._testcommand import SWEBENCH_RUNNERS, runner_ids
from endstate.errors import UserError

__all__ = ["Instance", "Skipped", "read_instances", "test_ids", "log_fragments"]


class Instance(msgspec.Struct, forbid_unknown_fields=True):
    """One SWE-bench instance. FAIL_TO_PASS and PASS_TO_PASS are lists of pytest node ids,
    or (as in the published datasets) a string holding such a list in JSON."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    FAIL_TO_PASS: list[str] | str
    PASS_TO_PASS: list[str] | str
    # The repository's version: SWE-bench's environment for it is honoured (`_swebenchenv`).
    version: str | float | None = None
    # SWE-bench's prebuilt image of the instance (swebench/sweb.eval.x86_64.<id>:latest) and the log
    # parser its harness reads the test run with (parse_log_django, parse_log_pytest...): the runner.
    image: str | None = None
    log_parser: str | None = None
    # The commit whose requirements files SWE-bench's environment of the version installs (read there).
    environment_setup_commit: str | None = None
    # Present in the published datasets; not used here (eval_script: the bash the harness runs to grade;
    # with --images swebench its test line is written on the task).
    hints_text: str | None = None
    created_at: str | None = None
    difficulty: str | None = None
    eval_script: str | None = None
    eval_type: str | None = None


class Skipped(msgspec.Struct):
    """An instance that was not written: where it is in the file, its id if known, and why."""

    line: int
    instance_id: str
    reason: str


#: What SWE-bench's log parser read as a test from a line that names none: pytest's progress (`[100%]`), a
#: bracket left of a cut line (`[`), progress run into a section's rule (`[100%]-----`). pytest's own
#: PASS_TO_PASS lists hold them (pytest-dev__pytest-5227 all three). No node id starts with `[`.
_NO_TEST = re.compile(r"\[[^\]]*\]?[-=_]*")


def log_fragments(instance: Instance) -> list[str]:
    """The entries of PASS_TO_PASS that name no test, only a fragment of a log line (`[100%]`): left out
    of the tests the task runs, and said so on the task."""
    raw = _decoded(instance, "PASS_TO_PASS")
    return [i for i in dict.fromkeys(raw) if _NO_TEST.fullmatch(i)]


def _decoded(instance: Instance, field: str) -> list[str]:
    raw = getattr(instance, field)
    if isinstance(raw, str):
        try:
            raw = msgspec.json.decode(raw, type=list[str])
        except msgspec.DecodeError as exc:
            raise UserError(f"field `{field}` is a string but not a JSON list of strings ({exc})") from None
    return raw


#: The log parsers SWE-bench's harness reads its Python repositories' test runs with (the others are
#: its parsers of Go, Rust, Java, JavaScript, PHP, Ruby and C runs: SWE-bench Multilingual, Multimodal).
PYTHON_LOG_PARSERS = frozenset(f"parse_log_{name}" for name in (
    "pytest", "pytest_options", "pytest_v2", "django", "sympy", "matplotlib", "seaborn", "sphinx", "astropy",
    "scikit", "xarray", "requests", "pylint", "flask", "astroid", "marshmallow", "pvlib", "pydicom", "pyvista",
    "sqlfluff"))


def test_ids(instance: Instance, field: str) -> list[str]:
    ids = list(dict.fromkeys(_decoded(instance, field)))  # each once, in the file's order
    if field == "PASS_TO_PASS":
        ids = [i for i in ids if not _NO_TEST.fullmatch(i)]
    wrong = runner_ids(SWEBENCH_RUNNERS.get(instance.repo, "pytest"), ids)  # Django's and sympy's are their own
    if wrong and instance.log_parser and instance.log_parser not in PYTHON_LOG_PARSERS:
        raise UserError(f"{instance.repo}'s tests are not Python's: SWE-bench reads them with {instance.log_parser}, "
                        f"none of its Python repositories' parsers (field `{field}` {wrong}); endstate imports the "
                        "records whose tests pytest, Django's or sympy's runner runs")
    if wrong:
        raise UserError(f"field `{field}` {wrong}")
    return ids


def read_instances(source: str | Path, split: str = "test",
                   select: Selection = Selection()) -> tuple[list[tuple[int, Instance]], list[Skipped]]:
    """Every instance of a dataset (`_swebenchdata`: a parquet, JSON or JSONL file, or a dataset name)
    that `select` keeps, with its place in it, plus the records that are not valid instances and the
    ids asked for that it does not hold."""
    instances, bad, present = [], [], set()
    for record in dataset_records(source, split, select):
        named = _id_of(record.value)
        present.add(named)
        try:
            if record.error:
                raise UserError(record.error)
            instance = msgspec.convert(record.value, type=Instance)
            for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                test_ids(instance, field)
        except (msgspec.ValidationError, UserError) as exc:
            bad.append(Skipped(record.number, named, record.where + (f" (instance {named})" if named else "")
                               + f": {_explain(exc)}"))
            continue
        instances.append((record.number, instance, record.where))
    seen: dict[str, str] = {}
    for number, instance, where in instances:
        if instance.instance_id in seen:
            bad.append(Skipped(number, instance.instance_id, f"{where}: instance {instance.instance_id} "
                               f"is also at {seen[instance.instance_id]}"))
        seen.setdefault(instance.instance_id, where)
    bad += [Skipped(0, named, f"--instance {named}: {source} holds no instance of that id")
            for named in select.ids if named not in present]
    duplicated = {s.line for s in bad}
    return [(n, i) for n, i, _ in instances if n not in duplicated], bad


def _id_of(value: object) -> str:
    named = value.get("instance_id") if isinstance(value, dict) else None
    return named if isinstance(named, str) else ""


def _explain(exc: Exception) -> str:
    text = str(exc)
    match = re.fullmatch(r"(.*) - at `\$\.([A-Za-z_]+).*`", text)
    if match:
        return f"field `{match[2]}`: {match[1]}"
    if text.startswith("Object missing required field"):
        return text.replace("Object missing required field", "missing field")
    return text.replace("Object contains unknown field", "unknown field")
