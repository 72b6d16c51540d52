"""Every file a person writes is decoded strictly, and a refusal lists what is valid where it failed:
task.toml, a policy file, an agent file, a price table."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def _task(tmp_path: Path, edit) -> Path:
    import shutil

    folder = tmp_path / "bugfix-lru-eviction"
    shutil.copytree(ROOT / "tasks" / "bugfix-lru-eviction", folder)
    toml = folder / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return folder


@pytest.mark.parametrize(("edit", "said"), [
    (lambda t: t.replace("[budget]\n", "[budget]\nmax_stpes = 3\n"),
     "unknown field `max_stpes` - at `$.budget` (valid fields there: max_steps, context_tokens, wall_seconds, "
     "command_timeout)"),
    (lambda t: t.replace('category = "bugfix"', 'category = "bugfx"'),
     "Invalid enum value 'bugfx' - at `$.category` (valid values: 'bugfix', 'feature', 'refactor', 'compaction', "
     "'permission', 'checkpoint', 'cost')"),
])
def test_a_task_toml_names_the_valid_fields_or_values(tmp_path, edit, said):
    from endstate.task import load_task

    folder = _task(tmp_path, edit)
    with pytest.raises(UserError) as caught:
        load_task(folder)
    assert str(caught.value) == f"{folder / 'task.toml'}: {said}"


@pytest.mark.parametrize(("text", "said"), [
    ('[[rule]]\nname = "x"\nkind = "command"\nprogam = ["rm"]\nreason = "r"\n',
     "unknown field `progam` - at `$.rule[0]` (valid fields there: name, reason, program, subcommand, flags_any, "
     "unless_flags, args_any, launched_by)"),
    ('[[rule]]\nname = "x"\nkind = "comand"\nreason = "r"\n',
     "Invalid value 'comand' - at `$.rule[0].kind` (valid values: 'command', 'python', 'write', 'read')"),
    ('[[rulez]]\nname = "x"\n', "unknown field `rulez` (valid fields there: rule, disable)"),
])
def test_a_policy_file_names_the_valid_fields_or_kinds(tmp_path, text, said):
    from endstate.agent import Policy

    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        Policy.load(path)
    assert str(caught.value) == f"{path}: {said}"


def test_an_agent_file_names_the_valid_fields(tmp_path):
    from endstate.agents import load_agent

    path = tmp_path / "agent.toml"
    path.write_text('name = "x"\n[install]\nrequirements = ["a==1"]\n[run]\nmodule = "m"\ntimeout = 3\n'
                    '[model]\nbase_url_env = "A"\napi_key_env = "B"\nname_env = "C"\n')
    with pytest.raises(UserError) as caught:
        load_agent(path)
    assert str(caught.value) == (f"{path}: unknown field `timeout` - at `$.run` (valid fields there: module, program, "
                                 "args, env, time_budget_s)")


def test_a_price_table_names_the_valid_fields(tmp_path):
    from endstate.report import load_prices

    path = tmp_path / "prices.toml"
    path.write_text('["openai/x"]\ninptu = 1\noutput = 2\n')
    with pytest.raises(UserError) as caught:
        load_prices(path)
    assert str(caught.value).startswith(f"price table {path}: unknown field `inptu` - at `$[...]` (valid fields "
                                        "there: input, output, cache_read, cache_write, reasoning)")
