"""The task files written from the Structs their reader decodes: task.toml (`Manifest`),
reference.toml (`Reference`) and hack.toml (`HackSpec`), and any other Struct kept as TOML
(Harbor's task.toml, `authoring._harborspec`).

One layout, the one people write and the committed tasks use (recordings name those files
by hash, so their bytes are held): the top-level fields, then one `[table]` a table, then one
`[[array]]` block an item of an array of tables; a table within those inline (`args = { ... }`),
a list on one line. A field equal to its default is left out; `None` is the default of the
fields a file may state or leave out (`solution_deletes = []`, a hack's `base`). msgspec's
own TOML encoder (tomli-w) lays tables and lists out otherwise, one line an item.

Every text is decoded back with the reader before it is written, and must equal what was
meant: a value the writer cannot spell is a bug it reports, never a file that reads otherwise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any

import msgspec

from endstate.task._manifest import HackSpec, Manifest, Reference

__all__ = ["toml_text", "write_manifest", "write_reference", "write_hack"]

#: Keys whose lists of inline tables are written one item a line when they hold more than one (a step's calls).
_ONE_A_LINE = frozenset({"calls"})
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and TOML escapes DEL as well."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _number(value: int | float) -> str:
    if isinstance(value, int) or math.isinf(value) or math.isnan(value):
        return str(value)
    return str(int(value)) if value.is_integer() else repr(value)  # 600.0 -> 600, as a person writes a limit


def _literal(value: Any, key: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_literal(v, k)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        items = [_literal(item) for item in value]
        if key in _ONE_A_LINE and len(items) > 1:
            return "[\n" + "".join(f"    {item},\n" for item in items) + "]"
        return "[" + ", ".join(items) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _plain(value: Any) -> Any:
    """`value` as TOML's types, each Struct a table of the fields that differ from their defaults."""
    if isinstance(value, msgspec.Struct):
        return {field.encode_name: _plain(getattr(value, field.name)) for field in msgspec.structs.fields(value)
                if not _default(field, getattr(value, field.name))}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _default(field: msgspec.structs.FieldInfo, value: Any) -> bool:
    if field.default is not msgspec.NODEFAULT:
        return bool(value == field.default)
    return field.default_factory is not msgspec.NODEFAULT and bool(value == field.default_factory())


def _tables(value: Any) -> bool:
    """An array of tables: a non-empty list of tables."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, Mapping) for item in value)


def _entries(table: Mapping[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_literal(v, k)}" for k, v in table.items()]


def toml_text(struct: msgspec.Struct, header: Iterable[str] = (), as_tables: Iterable[str] = ()) -> str:
    """`struct` as a TOML document in the house layout, `header` its comment lines above the fields.
    A field of its own Struct is a [table], and so are a table of arrays of tables (`policy.rule`) and
    the fields named in `as_tables`; another dict is written inline."""
    fields = _plain(struct)
    own = {f.encode_name for f in msgspec.structs.fields(struct) if isinstance(getattr(struct, f.name), msgspec.Struct)}
    tables = {k for k, v in fields.items()
              if k in own or k in as_tables or isinstance(v, Mapping) and any(map(_tables, v.values()))}
    lines = [f"# {line}" for line in header]
    scalars = {k: v for k, v in fields.items() if k not in tables and not _tables(v)}
    if scalars:
        lines += [*_entries(scalars), ""]
    elif lines:
        lines.append("")  # a comment right above a table would read as the table's own
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    arrays: list[tuple[str, Mapping[str, Any]]] = []
    for name, value in fields.items():
        if _tables(value):
            arrays += [(f"[[{_key(name)}]]", item) for item in value]
        elif name in tables:  # its arrays of tables come after the plain tables
            if plain := {k: v for k, v in value.items() if not _tables(v)}:
                blocks.append((f"[{_key(name)}]", plain))
            arrays += [(f"[[{_key(name)}.{_key(k)}]]", item) for k, v in value.items() if _tables(v) for item in v]
    for title, table in [*blocks, *arrays]:
        lines += [title, *_entries(table), ""]
    text = "\n".join(lines)
    if msgspec.toml.decode(text, type=type(struct)) != struct:
        raise AssertionError(f"the TOML writer does not read back as it was given: {struct!r} became {text!r}")
    return text


def write_manifest(folder: Path, manifest: Manifest, header: Iterable[str] = ()) -> Path:
    path = folder / "task.toml"
    path.write_text(toml_text(manifest, header), encoding="utf-8")
    return path


def write_reference(folder: Path, reference: Reference, header: Iterable[str] = (), name: str = "reference") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(toml_text(reference, header), encoding="utf-8")
    return path


def write_hack(folder: Path, spec: HackSpec, header: Iterable[str] = ()) -> Path:
    """`folder/hack.toml` (the folder made where missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hack.toml"
    path.write_text(toml_text(spec, header), encoding="utf-8")
    return path
