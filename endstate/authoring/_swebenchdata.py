"""SWE-bench's datasets as they are published: the records of a file or of a dataset name, and a slice of them.

A source is read as what it holds, whatever its name ends with:

    parquet     the form the datasets are distributed in (Hugging Face's `data/test-*.parquet`),
                read with pyarrow (the `swebench` extra); a dataset's folder stands for its
                split's file (`test.parquet`, or `data/test-*.parquet` where that is one file)
    JSON        a list of records (`[...]`), as SWE-bench's `--dataset_name x.json` takes it
    JSONL       one record per line
    a name      `SWE-bench/SWE-bench_Verified`, through the `datasets` library (the `swebench`
                extra) where the network reaches the Hub

Each record comes with where it is (`x.jsonl line 3`, `x.parquet record 3`), so an instance that
does not decode is named by its place. A slice (`Selection`) keeps the records whose instance id is
one asked for, matches a pattern, or whose repository is one named.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import msgspec

from endstate.errors import UserError

__all__ = ["Record", "Selection", "dataset_records", "INSTALL_HINT"]

#: What to install for parquet files and dataset names.
INSTALL_HINT = "pip install 'endstate[swebench]'"

_PARQUET_MAGIC = b"PAR1"


class Record(NamedTuple):
    """One record of a source: its place (a line for JSONL, a record elsewhere, from 1), how that
    place is said, and the record (a JSON-like value), or why it could not be read."""

    number: int
    where: str
    value: object
    error: str = ""


class Selection(msgspec.Struct, frozen=True):
    """A slice of a dataset: instances named by id (`--instance`), whose id matches `pattern`
    (`--filter`, searched), or of the repositories named (`--repo owner/name`); each kind given
    narrows the slice, and within a kind any one will do. Empty: every record."""

    ids: tuple[str, ...] = ()
    pattern: str = ""
    repos: tuple[str, ...] = ()

    def keeps(self, value: object) -> bool:
        if not isinstance(value, dict):
            return True  # not a record at all: said, whichever slice was asked for
        named, repo = value.get("instance_id"), value.get("repo")
        return ((not self.ids or named in self.ids)
                and (not self.pattern or (isinstance(named, str) and re.search(self.pattern, named) is not None))
                and (not self.repos or repo in self.repos))

    def check(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise UserError(f"--filter {self.pattern!r} is not a regular expression ({exc})") from None


def dataset_records(source: str | Path, split: str = "test", select: Selection = Selection()) -> list[Record]:
    """The records of `source` (a file, else a dataset name) that `select` keeps, in its order;
    UserError, in one line saying what to do, when the source cannot be read at all."""
    select.check()
    path = Path(source)
    if path.is_dir():
        records = _file_records(_split_file(path, split))
    elif path.is_file():
        records = _file_records(path)
    elif path.suffix in (".parquet", ".json", ".jsonl") or str(source).count("/") > 1 or str(source).startswith("."):
        raise UserError(f"{source}: no such file")
    else:
        records = _named_records(str(source), split)
    return [record for record in records if select.keeps(record.value)]


def _split_file(folder: Path, split: str) -> Path:
    """A split's file in a dataset's folder, as its copy from the Hub lays it out (`test.parquet`,
    or `data/test-00000-of-00001.parquet` in one file)."""
    found = [folder / f"{split}.parquet", *sorted(folder.glob(f"data/{split}-*.parquet"))]
    found = [path for path in found if path.is_file()]
    if len(found) != 1:
        raise UserError(f"{folder} is a folder with {'no' if not found else 'more than one'} file of split {split} "
                        f"({split}.parquet or data/{split}-*.parquet): give the dataset's file")
    return found[0]


def _file_records(path: Path) -> Iterator[Record]:
    try:
        with path.open("rb") as stream:
            head = stream.read(4)
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror})") from None
    if head == _PARQUET_MAGIC:
        return _parquet_records(path)
    data = path.read_bytes()
    if data.lstrip()[:1] == b"[":
        return _json_records(path, data)
    return _jsonl_records(path, data)


def _jsonl_records(path: Path, data: bytes) -> Iterator[Record]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield Record(number, f"{path} line {number}", msgspec.json.decode(line))
        except msgspec.DecodeError as exc:
            yield Record(number, f"{path} line {number}", None, f"not a JSON object ({exc})")


def _json_records(path: Path, data: bytes) -> Iterator[Record]:
    try:
        values = msgspec.json.decode(data, type=list)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UserError(f"{path}: not a JSON list of instances, nor one instance a line ({exc})") from None
    for number, value in enumerate(values, start=1):
        yield Record(number, f"{path} record {number}", value)


def _parquet_records(path: Path) -> Iterator[Record]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(f"{path} is a parquet file: reading it needs pyarrow ({INSTALL_HINT})") from None
    try:
        table = pq.ParquetFile(path)
        batches = list(table.iter_batches())
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors (ArrowInvalid, OSError) say what is wrong with the file
        raise UserError(f"{path}: not a readable parquet file ({_first_line(exc)})") from None
    number = 0
    for batch in batches:
        for value in batch.to_pylist():
            number += 1
            yield Record(number, f"{path} record {number}", _plain(value))


def _named_records(name: str, split: str) -> Iterator[Record]:
    try:
        import datasets
    except ImportError:
        raise UserError(f"{name}: no such file, and a dataset name is read through the `datasets` library, "
                        f"which is not installed ({INSTALL_HINT}); or give the dataset's file "
                        "(.parquet, .json or .jsonl)") from None
    quiet = [logging.getLogger(library) for library in ("huggingface_hub", "datasets")]
    levels = [logger.level for logger in quiet]
    try:
        for logger in quiet:  # its retries are logged line by line: the one line below says it
            logger.setLevel(logging.CRITICAL)
        rows = datasets.load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001 - the library's many errors (Hub out of reach, no such dataset or split)
        raise UserError(f"dataset {name} (split {split}) cannot be loaded through the datasets library: "
                        f"{_first_line(exc)}; where the network does not reach the Hub, download its parquet "
                        "file elsewhere and give the file") from None
    finally:
        for logger, level in zip(quiet, levels):
            logger.setLevel(level)
    for number, value in enumerate(rows, start=1):
        yield Record(number, f"dataset {name} ({split}) record {number}", _plain(value))


def _plain(value: object) -> object:
    """A record as JSON would hold it: a timestamp column (`created_at` in some releases) as ISO text."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    return value


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:300]
