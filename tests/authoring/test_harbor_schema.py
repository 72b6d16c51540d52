"""Harbor 0.26's task.toml (schema 1.4) as Harbor reads it: every field it has is a field endstate
reads, never refused as "not a Harbor task field". What endstate can do as Harbor does, it does:
`[environment] env` is the container's environment (agent, oracle and verifier alike), `[verifier]
env` the verifier's, `[solution] env` the oracle's, `[environment] workdir` the working folder. A
`${VAR:-default}` is its default: no variable of the host reaches a container. What it cannot do
as Harbor does (several steps, an MCP server, a host allowlist, compose services) is refused in one
line naming the field, before anything is built. `[environment.healthcheck]` runs as Harbor runs it:
in the started container, until it passes, before the oracle and before every agent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._harbor import import_one
from endstate.authoring._harborspec import network_mode, own_env, read_harbor_task
from endstate.authoring._harborstart import env_layer
from endstate.errors import UserError

DATA = Path(__file__).resolve().parent.parent / "data" / "harbor"

#: A task.toml holding every table and field of Harbor 0.26's TaskConfig (harbor/models/task/config.py).
EVERY_FIELD = """\
schema_version = "1.4"
source = "an-adapter"
multi_step_reward_strategy = "mean"
artifacts = ["/app", { source = "/var/log/app.log", destination = "logs/app.log", exclude = ["*.tmp"], service = "main" }]

[task]
name = "org/every-field"
version = "1.0.0"
description = "Every field Harbor knows"
authors = [{ name = "A. Author", email = "a@example.org" }]
keywords = ["shell"]

[metadata]
difficulty = "easy"

[verifier]
timeout_sec = 60.0
env = { EXPECTED = "3" }
user = "root"
environment_mode = "separate"
network_mode = "no-network"
allowed_hosts = []

[verifier.environment]
cpus = 1
memory_mb = 1024

[agent]
timeout_sec = 120.0
user = "agent"
network_mode = "no-network"

[environment]
build_timeout_sec = 600.0
os = "linux"
cpus = 1
memory_mb = 512
storage_mb = 1024
gpus = 0
mcp_servers = []
env = { GREETING = "hi", LABEL = "${LABEL:-words}" }
skills_dir = "/skills"
workdir = "/srv/app"
network_mode = "no-network"

[solution]
env = { SOLVER = "oracle" }
"""


def test_every_field_of_harbor_0_26_is_read(tmp_path):
    (tmp_path / "task.toml").write_text(EVERY_FIELD)
    task, tables = read_harbor_task(tmp_path / "task.toml")
    assert tables == {}
    assert task.task.name == "org/every-field" and task.task.authors[0].email == "a@example.org"
    assert task.artifacts[0] == "/app" and task.artifacts[1].destination == "logs/app.log"
    assert task.environment.env == {"GREETING": "hi", "LABEL": "${LABEL:-words}"}
    assert (task.environment.workdir, task.verifier.env, task.solution.env) == ("/srv/app", {"EXPECTED": "3"},
                                                                                {"SOLVER": "oracle"})
    assert network_mode(task) == "no-network"


@pytest.mark.peers
def test_the_tables_fields_are_the_pinned_harbors():
    """Against the pinned Harbor itself (the venv `make peers` makes): each table's field names are ones
    endstate reads."""
    import msgspec

    from endstate.authoring import _harborspec as spec

    ours = {"TaskConfig": spec.HarborTask, "EnvironmentConfig": spec.HarborEnvironment,
            "VerifierConfig": spec.HarborVerifier, "AgentConfig": spec.HarborAgent, "SolutionConfig": spec.HarborSolution,
            "HealthcheckConfig": spec.Healthcheck, "PackageInfo": spec.HarborPackage,
            "Author": spec.HarborAuthor, "ArtifactConfig": spec.HarborArtifact}
    ran = subprocess.run([str(Path(os.environ["ENDSTATE_PEERS"]) / "python"), "-c",
                          "import json, sys; from harbor.models.task import config as c; "
                          "print(json.dumps({n: sorted(getattr(c, n).model_fields) for n in sys.argv[1:]}))", *ours],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    for name, fields in json.loads(ran.stdout).items():
        assert fields and set(fields) <= {f.encode_name for f in msgspec.structs.fields(ours[name])}, name


@pytest.mark.parametrize(("table", "said"), [
    ('[[steps]]\nname = "one"\n', "field `steps` is [{'name': 'one'}]: a task of several steps"),
    ('[environment]\nos = "windows"\n', "field `environment.os` is 'windows': endstate runs Linux containers only"),
    ('[[environment.mcp_servers]]\nname = "figma"\nurl = "http://127.0.0.1:3847/mcp"\n',
     "field `environment.mcp_servers` is [{'name': 'figma', 'url': 'http://127.0.0.1:3847/mcp'}]: endstate gives its "
     "agents no MCP server"),
    ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n',
     "field `environment.network_mode` is 'allowlist': endstate cannot limit the network to a list of hosts"),
    ('[agent]\nnetwork_mode = "allowlist"\n', "field `agent.network_mode` is 'allowlist'"),
    ('[[verifier.collect]]\ncommand = "pg_dump db > /out/db.sql"\nservice = "db"\n', "field `verifier.collect` is"),
    ('[verifier.environment]\ndocker_image = "python:3.12"\n',
     "field `verifier.environment` is ['docker_image']: endstate grades in the task's own image"),
    ('artifacts = [{ source = "/data", service = "db" }]\n',
     "field `artifacts` is ['/data']: an artifact of a compose service"),
    ('[environment]\nenv = { HF_TOKEN = "${HF_TOKEN}" }\n',
     "field `environment.env.HF_TOKEN` is '${HF_TOKEN}', a variable of the host: endstate hands none to a container"),
    ('[verifier]\nenv = { "NOT-A-NAME" = "x" }\n', "field `verifier.env` names 'NOT-A-NAME': give a variable's name"),
    ('[verifier]\nenv = { TMPDIR = "/x" }\n', "field `verifier.env` names 'TMPDIR'"),
    ('[environment]\nenv = { NOTE = "two\\nlines" }\n', "field `environment.env.NOTE` holds a line break"),
    ('[environment]\nworkdir = "relative"\n', "field `environment.workdir` is 'relative': endstate links the task's "
                                             "working folder to its own /workspace: give an absolute folder"),
])
def test_what_endstate_cannot_do_as_harbor_does_is_refused_naming_the_field(tmp_path, table, said):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "task.toml").write_text(table if table.startswith("artifacts") else 'version = "1.0"\n' + table)
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value).startswith(f"{task / 'task.toml'}: {said}"), caught.value
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()


def test_a_dockerfile_whose_workdir_is_endstates_own_is_refused_naming_the_dockerfile(tmp_path):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "environment/Dockerfile").write_text("FROM an-image-nobody-has:1\nWORKDIR /workspace\n")
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value) == (f"{task / 'environment/Dockerfile'}: its WORKDIR is '/workspace': endstate links the "
                                 "task's working folder to its own /workspace: give an absolute folder other than / "
                                 "and /workspace")


def test_a_host_variable_is_never_taken_its_default_is_and_said(tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL", "the host's")
    said: list[str] = []
    got = own_env({"LABEL": "${LABEL:-words}", "PLAIN": "${not a template", "EMPTY": "${E:-}"}, "environment",
                  tmp_path / "task.toml", said.append)
    assert got == {"LABEL": "words", "PLAIN": "${not a template", "EMPTY": ""}
    assert said == ["field `environment.env.LABEL` is '${LABEL:-words}': endstate takes its default, never the "
                    "host's variable", "field `environment.env.EMPTY` is '${E:-}': endstate takes its default, never "
                    "the host's variable"]


def test_the_images_environment_is_written_as_the_shell_would_not_expand_it():
    assert env_layer({}) == ""
    assert env_layer({"B": "plain", "A": 'a "quoted" \\ $HOME'}).splitlines()[2:] == [
        'ENV A="a \\"quoted\\" \\\\ \\$HOME"', 'ENV B="plain"']


@pytest.mark.parametrize(("fields", "mode"), [
    ({}, "no-network"), ({"environment": {"allow_internet": True}}, "public"),
    ({"environment": {"allow_internet": False, "network_mode": "public"}}, "public"),
    ({"environment": {"network_mode": "public"}, "agent": {"network_mode": "no-network"}}, "no-network"),
])
def test_the_agents_network_is_its_own_then_the_environments_then_allow_internet(fields, mode):
    import msgspec

    from endstate.authoring._harborspec import HarborTask

    assert network_mode(msgspec.convert(fields, HarborTask)) == mode


def _checks_out(suite: Path, task_id: str) -> None:
    """`tasks check` of the imported `task_id`: the fixture fails, the oracle's end state passes and solve.sh
    played as the reference reaches it."""
    checked = run_endstate("tasks", "check", "--suite", str(suite))
    assert checked.returncode == 0, checked.output
    (line,) = [line for line in checked.stdout.splitlines() if line.startswith(f"ok   {task_id} ")]
    assert "fixture=fail[verifier], solution=pass" in line and line.endswith("reference=solution"), line


@pytest.mark.docker
def test_the_environments_the_verifiers_and_the_oracles_variables_and_its_workdir_reach_them(tmp_path):
    """A Harbor 0.26 task whose oracle, agent and verifier each need what task.toml sets: imported, its
    fixture fails and its solution passes, and solve.sh played as the reference reaches the solution."""
    task = tmp_path / "src" / "sh-label-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "task.toml").write_text(
        'schema_version = "1.4"\n\n[task]\nname = "org/sh-label-count"\n\n[verifier]\ntimeout_sec = 30.0\n'
        'env = { WANT = "3 words, $not expanded" }\nuser = "root"\n\n[agent]\ntimeout_sec = 120.0\nuser = "app"\n\n'
        '[environment]\nmemory_mb = 512\nos = "linux"\nworkdir = "/srv/words"\n'
        'env = { LABEL = "${ENDSTATE_TEST_LABEL:-words}" }\n\n[solution]\nenv = { SOLVER = "the oracle" }\n')
    (task / "environment/Dockerfile").write_text(
        "FROM endstate-sandbox:2\nWORKDIR /app\nRUN mkdir -p /srv/words && printf '#!/bin/bash\\necho 0\\n' "
        "> /srv/words/count.sh\n")
    (task / "solution/solve.sh").write_text(
        "#!/bin/bash\nprintf '#!/bin/bash\\necho \"$(wc -w | tr -d \" \") $LABEL\"\\n' > count.sh\n"
        "echo \"$SOLVER\" > by.txt\n")
    (task / "tests/test.sh").write_text(
        "#!/bin/bash\ngot=$(printf 'one two\\nthree\\n' | bash /srv/words/count.sh)\n"
        "if [ \"$got\" = \"3 $LABEL\" ] && [ \"$got, \\$not expanded\" = \"$WANT\" ] "
        "&& [ \"$(cat /srv/words/by.txt)\" = \"the oracle\" ]; then echo 1 > /logs/verifier/reward.txt\n"
        "else echo \"got '$got' by '$(cat /srv/words/by.txt)', want '$WANT'\"; echo 0 > /logs/verifier/reward.txt; fi\n")
    out = tmp_path / "suite"
    ran = run_endstate("tasks", "import", "harbor", str(task), "--out", str(out), env={"ENDSTATE_TEST_LABEL": "host"})
    assert ran.returncode == 0, ran.output
    assert "field `environment.env.LABEL` is '${ENDSTATE_TEST_LABEL:-words}': endstate takes its default" in ran.output
    assert "[verifier] user root: its verifier runs as the agent's user (uid 1000)" in ran.output
    manifest = tomllib.loads((out / "sh-label-count/task.toml").read_text())
    assert manifest["graders"][0]["args"]["env"] == {"WANT": "3 words, $not expanded"}
    assert (out / "sh-label-count/solution/by.txt").read_text() == "the oracle\n"
    assert "host" not in (out / "sh-label-count/image/Dockerfile").read_text()
    _checks_out(out, "sh-label-count")


def test_a_task_with_containers_beside_the_agents_is_refused_naming_them(tmp_path):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "environment/docker-compose.yaml").write_text(
        "services:\n  main:\n    depends_on:\n      api-server:\n        condition: service_healthy\n"
        "  api-server:\n    build:\n      context: ./api-server\n")
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value) == (f"{task / 'environment/docker-compose.yaml'}: its services api-server are containers "
                                 "of their own beside the agent's, which endstate does not start: a task that needs "
                                 "them cannot be done here")
    (task / "environment/docker-compose.yaml").write_text("services:\n  main:\n    shm_size: 1g\n")
    (task / "instruction.md").unlink()  # overrides of the agent's own container alone: past the compose file
    with pytest.raises(UserError, match=r"instruction.md: missing"):
        import_one(task, tmp_path / "out")


def test_what_task_toml_asks_is_said_before_a_missing_file(tmp_path):
    """Harbor's multi-step tasks have no instruction.md of their own: the steps are the reason."""
    task = tmp_path / "steps"
    task.mkdir()
    (task / "task.toml").write_text('schema_version = "1.1"\n[[steps]]\nname = "scaffold"\n')
    with pytest.raises(UserError, match=r"task.toml: field `steps` is .*: a task of several steps"):
        import_one(task, tmp_path / "out")


@pytest.mark.docker
def test_an_images_entrypoint_runs_first_for_the_oracle_and_the_agent_as_in_harbor(tmp_path):
    """Harbor starts its container with the image's ENTRYPOINT (then `sleep infinity`), which may start a
    service and make /logs/verifier for the verifier (Harbor's cookbook does both). The import's oracle
    runs after it as the agent does, and the folder it made under /logs is not the end state's tampering:
    the task checks out."""
    task = tmp_path / "src" / "sh-served-word"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "environment/entrypoint.sh").write_text(
        "#!/bin/bash\ncd /srv/site && python3 -m http.server 8081 --bind 127.0.0.1 >/dev/null 2>&1 &\n"
        "mkdir -p /logs/verifier && chmod 777 /logs /logs/verifier\nexec \"$@\"\n")
    (task / "environment/Dockerfile").write_text(
        "FROM endstate-sandbox:2\nWORKDIR /app\nCOPY entrypoint.sh /entrypoint.sh\n"
        "RUN chmod +x /entrypoint.sh && mkdir -p /srv/site && echo lantern > /srv/site/word\n"
        "ENTRYPOINT [\"/entrypoint.sh\"]\n")
    (task / "solution/solve.sh").write_text(
        "#!/bin/bash\nfor _ in $(seq 100); do word=$(python3 -c \"import urllib.request; print(urllib.request."
        "urlopen('http://127.0.0.1:8081/word').read().decode().strip())\" 2>/dev/null) && break; sleep 0.1; done\n"
        "echo \"$word\" > /app/word.txt\n")
    (task / "tests/test.sh").write_text(
        "#!/bin/bash\nif [ \"$(cat /app/word.txt)\" = lantern ]; then echo 1 > /logs/verifier/reward.txt\n"
        "else echo \"word.txt: '$(cat /app/word.txt)'\"; echo 0 > /logs/verifier/reward.txt; fi\n")
    out = tmp_path / "suite"
    ran = run_endstate("tasks", "import", "harbor", str(task), "--out", str(out))
    assert ran.returncode == 0, ran.output
    assert (out / "sh-served-word/solution/word.txt").read_text() == "lantern\n"
    _checks_out(out, "sh-served-word")


@pytest.mark.docker
def test_a_healthcheck_runs_until_it_passes_before_the_oracle_and_the_agent(tmp_path):
    """Harbor's healthcheck as a setup hook (its cookbook's and adapters' idiom): the first try starts a
    service, the later ones wait for it. The oracle reads from it at import, the reference played in a
    sandbox reads from it too; one that never passes ends the agent's run as the task's error."""
    from endstate.run import read_results

    task = tmp_path / "src" / "sh-healthy-word"
    shutil.copytree(DATA / "sh-word-count", task)
    start = ("test -f /var/tmp/started || { touch /var/tmp/started; cd /srv/site && setsid python3 -m http.server "
             "8082 --bind 127.0.0.1 >/dev/null 2>&1 </dev/null & }; python3 -c \\\"import urllib.request; "
             "urllib.request.urlopen('http://127.0.0.1:8082/word')\\\"")
    (task / "task.toml").write_text(
        f'schema_version = "1.4"\n\n[verifier]\ntimeout_sec = 30.0\n\n[agent]\ntimeout_sec = 120.0\n\n'
        f'[environment]\nmemory_mb = 512\n\n[environment.healthcheck]\ncommand = "{start}"\n'
        f'interval_sec = 0.5\nretries = 20\n')
    (task / "environment/Dockerfile").write_text(
        "FROM endstate-sandbox:2\nWORKDIR /app\nRUN mkdir -p /srv/site && echo ember > /srv/site/word\n")
    (task / "solution/solve.sh").write_text(
        "#!/bin/bash\npython3 -c \"import urllib.request; print(urllib.request.urlopen("
        "'http://127.0.0.1:8082/word').read().decode().strip())\" > /app/word.txt\n")
    (task / "tests/test.sh").write_text(
        "#!/bin/bash\nif [ \"$(cat /app/word.txt)\" = ember ]; then echo 1 > /logs/verifier/reward.txt\n"
        "else echo \"word.txt: '$(cat /app/word.txt)'\"; echo 0 > /logs/verifier/reward.txt; fi\n")
    out = tmp_path / "suite"
    ran = run_endstate("tasks", "import", "harbor", str(task), "--out", str(out))
    assert ran.returncode == 0, ran.output
    manifest = tomllib.loads((out / "sh-healthy-word/task.toml").read_text())
    assert manifest["sandbox"]["healthcheck"]["retries"] == 20
    assert (out / "sh-healthy-word/solution/word.txt").read_text() == "ember\n"
    _checks_out(out, "sh-healthy-word")

    toml = out / "sh-healthy-word/task.toml"
    toml.write_text(toml.read_text().replace("retries = 20", "retries = 2").replace(start.replace("\\\\", "\\"),
                                                                                      "exit 7"))
    assert 'command = "exit 7"' in toml.read_text()
    live = run_endstate("eval", "--suite", str(out), "--model", "scripted/reference", "--out", str(tmp_path / "run"))
    (result,) = read_results(tmp_path / "run").tasks
    assert (result.outcome, result.stop_reason) == ("error", "input_error"), live.output
    assert "the task's healthcheck `exit 7` never passed: it failed 2 time(s) in a row" in result.reason


def test_a_tasks_healthcheck_is_exported_as_harbors_and_reads_back(tmp_path):
    from endstate.authoring import export_harbor_task
    from endstate.task import load_task

    task = tmp_path / "suite" / "bugfix-lru-eviction"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction", task)
    manifest = task / "task.toml"
    manifest.write_text(manifest.read_text().replace("\n[budget]\n", '\n[sandbox]\nhealthcheck = { command = "true", '
                                                     'retries = 2 }\n\n[budget]\n', 1))
    assert load_task(task).manifest.sandbox.healthcheck.retries == 2
    export_harbor_task(load_task(task), tmp_path / "out")
    harbor, _ = read_harbor_task(tmp_path / "out" / "bugfix-lru-eviction" / "task.toml")
    assert (harbor.environment.healthcheck.command, harbor.environment.healthcheck.retries) == ("true", 2)


def test_a_verifier_with_no_timeout_gets_harbors_600_seconds(tmp_path):
    from endstate.authoring._harbor import _manifest
    from endstate.authoring._harborspec import HarborTask

    made = _manifest("t", tmp_path, "/app", [], [], HarborTask(), None, {"user": "agent", "network": False,
                                                                          "whole": False})
    assert made.graders[0].args["timeout"] == 600.0


@pytest.mark.docker
def test_a_healthcheck_that_never_passes_at_import_is_one_line_and_leaves_no_container(tmp_path):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    (task / "task.toml").write_text('version = "1.0"\n\n[environment.healthcheck]\ncommand = "echo not yet; exit 3"\n'
                                    "interval_sec = 0.1\nretries = 2\n")
    with pytest.raises(UserError) as caught:
        import_one(task, tmp_path / "out")
    assert str(caught.value) == ("task sh-word-count: its healthcheck `echo not yet; exit 3` never passed: it "
                                 "failed 2 time(s) in a row after its start period of 0 s (last: exit 3, not yet): the "
                                 "task's environment is not ready, before the oracle ran: the oracle must run offline "
                                 "in the task's image")
    left = subprocess.run(["docker", "ps", "-aq", "--filter", f"name=endstate-harbor-import-{os.getpid()}-"],
                          capture_output=True, text=True, check=True)
    assert left.stdout == "" and not (tmp_path / "out" / "sh-word-count").exists()
