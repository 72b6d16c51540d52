"""A Harbor task.toml is decoded strictly at import: a field no table has is a typo that would do
nothing (a verifier without its timeout), refused in one line listing the valid fields."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from endstate.authoring._harbor import import_one
from endstate.errors import UserError

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


@pytest.mark.parametrize(("typo", "said"), [
    ("[verifier]\ntimeout_secs = 30\n", "field `verifier.timeout_secs` is not a Harbor task field: valid ones in "
                                        "[verifier] are timeout_sec, env, environment_mode"),
    ("[agent]\ntimeout = 120\n", "field `agent.timeout` is not a Harbor task field: valid ones in [agent] are "
                                 "timeout_sec"),
    ("[environment]\nmemory_gb = 2\n", "field `environment.memory_gb` is not a Harbor task field: valid ones in "
                                       "[environment] are build_timeout_sec, docker_image, cpus, memory, memory_mb, "
                                       "storage, storage_mb, gpus, gpu_types, allow_internet"),
    ('versoin = "1.0"\n', "top-level field `versoin` is not a Harbor task field: valid ones are version, metadata, "
                          "verifier, agent, environment, solution, artifacts"),
])
def test_a_misspelt_field_is_refused_at_import_naming_it_and_the_valid_ones(tmp_path, typo, said):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "task.toml").write_text(typo + "[metadata]\nanything = \"goes\"\n")
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value) == f"{task / 'task.toml'}: {said}"
    assert not (tmp_path / "out").exists()


def test_the_shipped_sources_have_only_known_fields():
    from endstate.authoring._harborspec import check_fields, read_toml

    root = Path(__file__).resolve().parents[2]
    sources = sorted([*(root / "harbor-tasks").glob("*/task.toml"), *DATA.parent.glob("harbor*/*/task.toml")])
    assert len(sources) >= 8
    for path in sources:
        check_fields(read_toml(path), path)
