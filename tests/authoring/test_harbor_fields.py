"""A Harbor task.toml is decoded into a Struct of its own (`HarborTask`), strictly at import: a field
no table has is a typo that would do nothing (a verifier without its timeout), refused in one line
listing the valid fields; a table endstate does not know (a newer Harbor's) is kept aside and named.
The export writes the same Struct."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from endstate.authoring._harbor import import_one
from endstate.errors import UserError

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


@pytest.mark.parametrize(("typo", "said"), [
    ("[verifier]\ntimeout_secs = 30\n", "field `verifier.timeout_secs` is not a Harbor task field: valid ones in "
                                        "[verifier] are timeout_sec, env, environment_mode, user, network_mode, "
                                        "allowed_hosts, environment, collect"),
    ("[agent]\ntimeout = 120\n", "field `agent.timeout` is not a Harbor task field: valid ones in [agent] are "
                                 "timeout_sec, user, network_mode, allowed_hosts"),
    ("[environment]\nmemory_gb = 2\n", "field `environment.memory_gb` is not a Harbor task field: valid ones in "
                                       "[environment] are build_timeout_sec, docker_image, os, cpus, memory, memory_mb, "
                                       "storage, storage_mb, gpus, gpu_types, tpu, mcp_servers, env, skills_dir, "
                                       "healthcheck, workdir, network_mode, allowed_hosts, allow_internet"),
    ('versoin = "1.0"\n', "top-level field `versoin` is not a Harbor task field: valid ones are version, schema_version, "
                          "task, source, artifacts, metadata, verifier, agent, environment, solution, "
                          "multi_step_reward_strategy, steps"),
    ("[environment]\ncpus = 0\n", "field `environment.cpus` is 0: give a positive number"),
    ("[environment]\nmemory_mb = 0.5\n", "field `environment.memory_mb` is 0.5: give a positive whole number"),
    ("[environment]\ngpus = \"one\"\n", "field `environment.gpus` is 'one': give a whole number"),
    ("[environment]\nallow_internet = 1\n", "field `environment.allow_internet` is 1: give true or false"),
])
def test_a_misspelt_field_is_refused_at_import_naming_it_and_the_valid_ones(tmp_path, typo, said):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "task.toml").write_text(typo + "[metadata]\nanything = \"goes\"\n")
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value) == f"{task / 'task.toml'}: {said}"
    assert not (tmp_path / "out").exists()


def test_a_shipped_source_reads_into_the_struct_and_writes_back_as_it_read():
    from endstate.authoring._harborspec import HarborTask, harbor_text, read_harbor_task

    root = Path(__file__).resolve().parents[2]
    sources = sorted([*(root / "harbor-tasks").glob("*/task.toml"), *DATA.parent.glob("harbor*/*/task.toml")])
    assert len(sources) >= 8
    for path in sources:
        task, tables = read_harbor_task(path)
        assert tables == {} and task.version == "1.0", path
        assert msgspec.toml.decode(harbor_text(task), type=HarborTask) == task, path


def test_a_table_endstate_does_not_know_is_kept_aside_and_named(tmp_path):
    from endstate.authoring._harborspec import read_harbor_task

    (tmp_path / "task.toml").write_text('version = "1.0"\n[later]\nname = "org/x"\n[agent]\ntimeout_sec = 60\n')
    task, tables = read_harbor_task(tmp_path / "task.toml")
    assert task.agent.timeout_sec == 60 and tables == {"later": {"name": "org/x"}}


def test_an_exported_task_toml_imports_as_the_task_it_came_from(tmp_path):
    from endstate.authoring import export_harbor_task
    from endstate.authoring._harborspec import read_harbor_task
    from endstate.task import load_task

    task = load_task(Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction")
    export_harbor_task(task, tmp_path)
    harbor, tables = read_harbor_task(tmp_path / task.id / "task.toml")
    assert tables == {} and harbor.agent.timeout_sec == task.manifest.budget.wall_seconds
    assert harbor.agent.user == "agent" and harbor.verifier.environment_mode == "separate"


def test_a_task_that_grades_listed_ids_of_a_wider_run_is_refused_by_the_export_in_one_line(tmp_path):
    """Harbor's verifier (verify.py) counts every test its command runs: a `tests_pass` that grades the ids it lists
    of a run of whole files (the SWE-bench import's) cannot be written there without passing or failing otherwise."""
    from endstate.authoring import export_harbor_task
    from endstate.errors import UserError
    from endstate.task import load_task

    task = tmp_path / "suite" / "bugfix-lru-eviction"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction", task)
    manifest = task / "task.toml"
    command = 'command = "python -m pytest -q tests"'
    assert manifest.read_text().count(command) == 1
    manifest.write_text(manifest.read_text().replace(command, command + ', tests = ["tests/test_lru.py::test_get"]'))
    with pytest.raises(UserError, match=r"^task bugfix-lru-eviction: its tests_pass grades the ids it lists .* "
                                        r"cannot hold it$"):
        export_harbor_task(load_task(task), tmp_path / "out")


@pytest.mark.parametrize(("own", "said", "dockerfile", "user"), [
    (None, None, "FROM x\nUSER app\n", "agent"), (None, None, "FROM x\n", "root"),
    (None, "root", "FROM x\nUSER app\n", "root"), (None, 0, "FROM x\nUSER app\n", "root"),
    (None, "app", "FROM x\n", "agent"), ("root", "app", "FROM x\n", "root"), ("agent", "root", "FROM x\n", "agent"),
])
def test_who_the_agent_works_as_is_endstate_toml_then_harbors_agent_user_then_the_dockerfile(own, said, dockerfile,
                                                                                            user):
    from endstate.authoring._harbor import agent_user
    from endstate.authoring._harborspec import EndstateSettings, HarborAgent, HarborTask

    assert agent_user(EndstateSettings(user=own), HarborTask(agent=HarborAgent(user=said)), dockerfile) == user


def test_an_endstate_task_given_to_the_import_says_it_needs_none(tmp_path):
    """It was refused as a Harbor task with a misspelt top-level field `id`."""
    from cli_runner import invoke_endstate

    root = Path(__file__).resolve().parents[2]
    suite = tmp_path / "tasks"
    shutil.copytree(root / "tasks" / "bugfix-lru-eviction", suite / "bugfix-lru-eviction")
    ran = invoke_endstate("tasks", "import", "harbor", str(suite), "--out", str(tmp_path / "out"),
                          env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert ran.err == (f"endstate: error: {suite / 'bugfix-lru-eviction' / 'task.toml'} is an endstate task already "
                       f"(it has `id` and `graders`): it needs no import; run it with --suite {suite}\n"), ran
