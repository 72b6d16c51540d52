"""Agent files: the shipped one loads, mistakes name the file and the field, the id follows the bytes."""

from __future__ import annotations

import pytest

from endstate.agents import DEFAULT_AGENT, find_agent, load_agent
from endstate.agents._spec import shipped_agents
from endstate.errors import AgentFileError

MINIMAL = """\
name = "toy"
[install]
requirements = ["toy==1.0"]
[run]
module = "toy"
[model]
base_url_env = "TOY_URL"
api_key_env = "TOY_KEY"
name_env = "TOY_MODEL"
"""


def test_the_shipped_mini_swe_agent_file_loads_and_is_pinned():
    spec = find_agent("mini-swe-agent")
    assert spec is not None and spec.name == "mini-swe-agent"
    assert all("==" in r for r in spec.install.requirements)
    assert spec.scripted is not None and spec.scripted.submit.endswith("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert spec.id.startswith("mini-swe-agent@") and len(spec.id) == len("mini-swe-agent@") + 12
    assert "mini-swe-agent" in shipped_agents()


def test_endstate_names_its_own_loop():
    assert find_agent(DEFAULT_AGENT) is None and find_agent("") is None


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(AgentFileError, match="unknown agent 'aider'.*endstate, claude-code, codex, mini-swe-agent"):
        find_agent("aider")


def test_an_unknown_field_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(MINIMAL.replace('module = "toy"', 'module = "toy"\nmodul = "typo"'))
    with pytest.raises(AgentFileError) as caught:
        load_agent(path)
    assert str(path) in str(caught.value) and "modul" in str(caught.value) and "$.run" in str(caught.value)


@pytest.mark.parametrize("edit, field", [
    (('name = "toy"', 'name = "Toy Agent"'), "name"),
    (('name = "toy"', 'name = "endstate"'), "name"),
    (('requirements = ["toy==1.0"]', "requirements = []"), "install.requirements"),
    (("[model]", '[[normalise]]\npattern = "("\n[model]'), "normalise[0].pattern"),
    (('module = "toy"', 'module = "toy"\nprogram = "toy"'), "run.module"),
    (('requirements = ["toy==1.0"]', 'npm = ["toy"]'), "install.npm[0]"),
    (('requirements = ["toy==1.0"]', 'npm = ["@scope/toy@^1.0"]'), "install.npm[0]"),
])
def test_bad_values_name_the_field(tmp_path, edit, field):
    path = tmp_path / "toy.toml"
    path.write_text(MINIMAL.replace(*edit))
    with pytest.raises(AgentFileError, match=rf"{path}: field `{field.replace('[', '.').replace(']', '.')}"):
        load_agent(path)


def test_the_id_changes_with_the_file(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(MINIMAL)
    first = load_agent(path).id
    path.write_text("description = 'changed'\n" + MINIMAL)
    assert load_agent(path).id != first and first.startswith("toy@")
    assert find_agent(str(path)).id == load_agent(path).id


@pytest.mark.parametrize(("install", "version"), [
    ('requirements = ["toy==1.0"]', "1.0"),
    ('requirements = ["toy[extra] == 2.3.4 ; python_version >= \'3.10\'"]', "2.3.4"),
    ('requirements = ["toy>=1.0"]', ""),  # not pinned: no version to show
    ('npm = ["@scope/toy@0.171.0-linux-x64", "other@1.0.0"]', "0.171.0-linux-x64"),
])
def test_the_version_is_the_first_pinned_package_s(tmp_path, install, version):
    path = tmp_path / "toy.toml"
    path.write_text(MINIMAL.replace('requirements = ["toy==1.0"]', install))
    assert load_agent(path).version == version


def test_the_shipped_program_agents_show_their_pinned_versions():
    assert {name: find_agent(name).version for name in ("claude-code", "codex", "mini-swe-agent")} == {
        "claude-code": "2.1.197", "codex": "0.171.0-linux-x64", "mini-swe-agent": "2.4.6"}


def test_an_npm_package_may_be_a_tarball_keyed_by_its_bytes(tmp_path):
    from endstate.agents._image import _npm_keyed

    tarball = tmp_path / "toy-1.0.0.tgz"
    tarball.write_bytes(b"first")
    path = tmp_path / "toy.toml"
    path.write_text(MINIMAL.replace('requirements = ["toy==1.0"]', f'npm = ["{tarball}", "other@1.2.3"]')
                    .replace('module = "toy"', 'program = "toy"'))
    spec = load_agent(path)
    first = _npm_keyed(spec)
    assert first[1] == "other@1.2.3" and first[0].startswith("toy-1.0.0.tgz@") and spec.version == ""
    tarball.write_bytes(b"second")  # the same path, other bytes: another npm folder and layer
    assert _npm_keyed(spec)[0] != first[0] and _npm_keyed(spec)[1:] == first[1:]
