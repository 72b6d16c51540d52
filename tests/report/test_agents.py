"""Foreign agents in the reports: the table, card and viewer name the agent and its version
like a model, and `compare` pairs two agents on one model, or one agent on two models."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate
from report_helpers import run, write

from endstate.errors import UserError
from endstate.report import benchmark, compare_runs, load_prices, render_comparison, render_text, render_view
from endstate.run import RunResult

TASKS = {"bugfix-a": "pass", "bugfix-b": "fail", "feature-c": "pass", "refactor-d": "fail"}
OTHER = {"bugfix-a": "pass", "bugfix-b": "pass", "feature-c": "pass", "refactor-d": "fail"}
#: The hash of the tasks alone; each agent's task_pack_hash also names the agent, so they differ.
TASKS_HASH = "c" * 64


def by(agent: str, version: str, outcomes: dict[str, str], model: str = "scripted/reference",
       tasks_hash: str | None = TASKS_HASH) -> RunResult:
    result = run(outcomes, model)
    card = msgspec.structs.replace(result.card, agent=agent, agent_version=version,
                                   task_pack_hash=f"{agent}-pack".ljust(64, "0"),
                                   tasks_hash=msgspec.UNSET if tasks_hash is None else tasks_hash)
    return RunResult(card, result.tasks)


def test_the_table_and_card_show_each_agent_with_its_version(tmp_path: Path) -> None:
    claude = write(tmp_path / "claude", by("claude-code@67a27e93167f", "2.1.197", TASKS))
    codex = write(tmp_path / "codex", by("codex@12443ce97210", "0.171.0", OTHER))
    report = benchmark([claude, codex], load_prices(None))
    assert [(r.agent_label, r.model) for r in report.rows] == [("claude-code 2.1.197", "scripted/reference"),
                                                               ("codex 0.171.0", "scripted/reference")]
    assert [(r.card["agent"], r.card["agent_version"]) for r in report.rows] == [
        ("claude-code@67a27e93167f", "2.1.197"), ("codex@12443ce97210", "0.171.0")]
    text = render_text(report)
    header = text.splitlines()[0].split()
    assert header[:2] == ["provider", "agent"]
    assert "scripted  claude-code 2.1.197  scripted/reference" in text
    assert "scripted  codex 0.171.0        scripted/reference" in text


def test_a_run_card_without_a_version_shows_the_agent_id(tmp_path: Path) -> None:
    old = write(tmp_path / "old", by("mini-swe-agent@13ef1f1c061d", "", TASKS))
    row = benchmark([old], load_prices(None)).rows[0]
    assert row.agent_label == "mini-swe-agent@13ef1f1c061d" and "agent_version" not in row.card


def test_the_viewer_tells_two_agents_on_one_model_apart(tmp_path: Path) -> None:
    claude = write(tmp_path / "claude", by("claude-code@67a27e93167f", "2.1.197", TASKS))
    codex = write(tmp_path / "codex", by("codex@12443ce97210", "0.171.0", OTHER))
    page = render_view([claude, codex], load_prices(None))
    for label in ("claude-code 2.1.197 on scripted/reference", "codex 0.171.0 on scripted/reference"):
        assert f"<summary>{label}</summary>" in page  # its card
        assert f'"model":"{label}"' in page  # the task list's run selector
        assert page.count(label) >= 4  # and the plots: pass rate, tokens, steps, categories
    assert "<td>claude-code 2.1.197</td>" in page and "<td>codex 0.171.0</td>" in page  # table and sides
    assert "pairs two agents on one model (scripted/reference): claude-code 2.1.197 against codex 0.171.0" in page


def test_compare_pairs_two_agents_on_one_model() -> None:
    c = compare_runs(by("claude-code@67a27e93167f", "2.1.197", TASKS), by("codex@12443ce97210", "0.171.0", OTHER))
    assert [(p.task_id, p.base, p.cand) for p in c.pairs if p.base != p.cand] == [("bugfix-b", 0.0, 1.0)]
    assert c.task_pack_hash == TASKS_HASH
    text = render_comparison(c)
    assert "pairs two agents on one model (scripted/reference): claude-code 2.1.197 against codex 0.171.0" in text
    assert "base: scripted/reference, agent claude-code 2.1.197, live" in text


def test_compare_pairs_one_agent_on_two_models_and_says_when_both_differ() -> None:
    a = by("codex@12443ce97210", "0.171.0", TASKS, "openai/gpt-a")
    b = by("codex@12443ce97210", "0.171.0", OTHER, "openai/gpt-b")
    assert compare_runs(a, b).pairing == "one agent (codex 0.171.0) on two models: openai/gpt-a against openai/gpt-b"
    mixed = compare_runs(a, by("claude-code@67a27e93167f", "2.1.197", OTHER, "anthropic/claude-x"))
    assert mixed.pairing.startswith("agent and model both differ (codex 0.171.0 on openai/gpt-a against "
                                    "claude-code 2.1.197 on anthropic/claude-x)")


def test_compare_refuses_other_tasks_and_a_card_too_old_to_pair_across_agents() -> None:
    codex = by("codex@12443ce97210", "0.171.0", TASKS)
    with pytest.raises(UserError, match=r"ran different task packs \(pack hash dddddddddddd vs cccccccccccc\)"):
        compare_runs(by("claude-code@67a27e93167f", "2.1.197", OTHER, tasks_hash="d" * 64), codex)
    with pytest.raises(UserError, match=r"BASE ran agent claude-code@67a27e93167f but its run card has no tasks_hash"):
        compare_runs(by("claude-code@67a27e93167f", "2.1.197", OTHER, tasks_hash=None), codex)


def test_endstate_compare_pairs_two_agents_from_the_command_line(tmp_path: Path) -> None:
    claude = write(tmp_path / "claude", by("claude-code@67a27e93167f", "2.1.197", TASKS))
    codex = write(tmp_path / "codex", by("codex@12443ce97210", "0.171.0", OTHER))
    ran = run_endstate("compare", str(claude), str(codex))
    assert ran.returncode == 0, ran.stderr
    assert "pairs two agents on one model (scripted/reference)" in ran.stdout
