"""Paired comparison of two runs: pairing, refusals, attempts, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate
from report_helpers import run, write

from endstate.errors import UserError
from endstate.report import compare_runs, render_comparison

BASE = {"bugfix-a": "pass", "bugfix-b": "fail", "bugfix-c": "fail", "feature-d": "pass", "feature-e": "fail"}
CAND = {"bugfix-a": "pass", "bugfix-b": "pass", "bugfix-c": "pass", "feature-d": "fail", "feature-e": "fail"}


def test_pairs_tasks_and_counts_discordant_per_category() -> None:
    c = compare_runs(run(BASE, "a/base"), run(CAND, "b/cand"), by_category=True)
    overall, bugfix, feature = c.summaries
    assert (overall.group, overall.tasks) == ("all", 5)
    assert overall.base_rate == pytest.approx(0.4) and overall.cand_rate == pytest.approx(0.6)
    assert overall.difference == pytest.approx(0.2)
    assert (overall.base_better, overall.cand_better) == (1, 2)
    assert overall.p_value == pytest.approx(1.0)  # 2 * (1 + 3)/8 capped
    assert (bugfix.base_better, bugfix.cand_better, bugfix.p_value) == (0, 2, pytest.approx(0.5))
    assert (feature.base_better, feature.cand_better) == (1, 0)
    assert [p.task_id for p in c.pairs if p.cand > p.base] == ["bugfix-b", "bugfix-c"]
    text = render_comparison(c)
    assert "cand better" in text and "McNemar p" in text


def test_attempts_compare_pass_fractions() -> None:
    base = run({"bugfix-a": ["pass", "fail", "fail"], "bugfix-b": ["pass", "pass", "pass"]})
    cand = run({"bugfix-a": ["pass", "pass", "fail"], "bugfix-b": ["pass", "pass", "pass"]})
    c = compare_runs(base, cand)
    assert (c.base_attempts, c.cand_attempts) == (3, 3)
    assert [(p.base, p.cand) for p in c.pairs] == [(pytest.approx(1 / 3), pytest.approx(2 / 3)), (1.0, 1.0)]
    assert c.summaries[0].difference == pytest.approx(1 / 6)
    assert (c.summaries[0].base_better, c.summaries[0].cand_better) == (0, 1)


def test_refuses_another_task_pack() -> None:
    with pytest.raises(UserError, match="different task packs .*aaaaaaaaaaaa vs cccccccccccc"):
        compare_runs(run(BASE), run(CAND, pack="c" * 64))


def test_refuses_other_graders_naming_the_task() -> None:
    graders = {tid: ("tests_pass", "holdout") for tid in CAND}
    graders["feature-d"] = ("tests_pass",)
    with pytest.raises(UserError, match="graded differently .*task feature-d"):
        compare_runs(run(BASE), run(CAND, graders=graders))


def test_cli_prints_json_and_refuses_with_exit_2(tmp_path: Path) -> None:
    base, cand = write(tmp_path / "base", run(BASE, "a/base")), write(tmp_path / "cand", run(CAND, "b/cand"))
    ran = run_endstate("compare", str(base), str(cand), "--by", "category", "--json")
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert [s["group"] for s in data["summaries"]] == ["all", "bugfix", "feature"]
    assert data["summaries"][0]["cand_better"] == 2
    other = write(tmp_path / "other", run(CAND, pack="c" * 64))
    ran = run_endstate("compare", str(base), str(other))
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "different task packs" in ran.stderr and "Traceback" not in ran.stderr


def test_a_fork_is_paired_with_the_base_it_forked(tmp_path: Path) -> None:
    import hashlib

    import msgspec

    from endstate.cassettes import Provenance

    (tmp_path / "bugfix-a.cassette").write_bytes(b"the base's recording of bugfix-a")
    parent = hashlib.sha256(b"the base's recording of bugfix-a").hexdigest()
    base = run(BASE)
    base = msgspec.structs.replace(base, card=msgspec.structs.replace(base.card, replay_from=str(tmp_path)))
    cand = run(CAND, "scripted/null")
    forks = {"bugfix-a": Provenance("forked", replayed_turns=1, live_from=1, parent=parent),
             "bugfix-b": Provenance("forked", replayed_turns=2, live_from=2, parent="f" * 64)}
    cand = msgspec.structs.replace(cand, tasks=[msgspec.structs.replace(t, provenance=forks[t.task_id])
                                                if t.task_id in forks else t for t in cand.tasks])
    c = compare_runs(base, cand)
    paired = {p.task_id: (p.cand_fork_at, p.fork_of_base) for p in c.pairs}
    assert paired["bugfix-a"] == (1, True) and paired["bugfix-b"] == (2, False)
    assert paired["bugfix-c"] == (msgspec.UNSET, False)
    text = render_comparison(c)
    assert "cand forked from base, live from turn 1" in text and "cand forked, live from turn 2" in text
    assert "cand forked 2 task(s), 1 of them from the cassette base replayed" in text


def test_sides_are_labelled_by_model_agent_and_mode_not_only_path(tmp_path: Path) -> None:
    base, cand = run(BASE), run(CAND)
    base = msgspec.structs.replace(base, card=msgspec.structs.replace(base.card, mode="replay", replay_from="cassettes"))
    cand = msgspec.structs.replace(cand, card=msgspec.structs.replace(cand.card, agent="aider@1234"))
    c = compare_runs(base, cand, names=("runs/a", "runs/b"))
    assert c.base_label == "scripted/reference, agent endstate, replay of cassettes (runs/a)"
    assert c.cand_label == "scripted/reference, agent aider@1234, live (runs/b)"
    text = render_comparison(c)
    assert "base: scripted/reference, agent endstate, replay of cassettes (runs/a)" in text


def test_small_n_warning_says_the_n_and_why() -> None:
    few = {k: v for k, v in BASE.items() if k.startswith("bugfix")}
    c = compare_runs(run(few), run(CAND))
    assert c.small_n.startswith("only 3 paired task(s) (base has 3, cand 5)")
    assert "McNemar p would be 0.25" in c.small_n
    assert "warning: only 3 paired task(s)" in render_comparison(c)
    many = {f"bugfix-{i}": "pass" for i in range(6)}
    assert compare_runs(run(many), run(many)).small_n == ""


def test_an_unscored_attempt_is_no_side_s_regression(tmp_path):
    """An infra_error (or error, divergence) says nothing of either model: the task is listed, not
    counted as the candidate's failure, nor as "base better", in compare or in the viewer."""
    from endstate.report._paired import RunSide, pair_runs

    outcomes = {f"bugfix-{n}": "pass" for n in "abcdefg"}
    base = run(outcomes)
    cand = run({**outcomes, "bugfix-a": "infra_error", "bugfix-b": "error"})
    c = compare_runs(base, cand)
    (summary,) = c.summaries
    assert (summary.tasks, summary.base_better, summary.cand_better) == (5, 0, 0)
    assert (summary.base_rate, summary.cand_rate, summary.difference) == (1.0, 1.0, 0.0)
    assert c.not_graded == ["bugfix-a", "bugfix-b"]
    text = render_comparison(c)
    assert "base better" not in text.split("group")[0], text  # no task row marks a regression
    assert "bugfix-a  bugfix    pass  infra_error  not scored: infra_error" in text, text
    assert "unscored attempts (error, divergence, infra_error) left out of the figures: bugfix-a, bugfix-b" in text
    (candidate,) = pair_runs(RunSide("base", base), [RunSide("cand", cand)])
    kinds = {row["id"]: row["kind"] for row in candidate.rows}
    assert kinds["bugfix-a"] == kinds["bugfix-b"] == "unscored" and "to-fail" not in kinds.values()


def test_a_failed_attempt_beside_an_unscored_one_still_counts(tmp_path):
    base = run({"bugfix-a": ["pass", "pass"], "bugfix-b": ["pass", "pass"]})
    cand = run({"bugfix-a": ["infra_error", "fail"], "bugfix-b": ["pass", "pass"]})
    pair = next(p for p in compare_runs(base, cand).pairs if p.task_id == "bugfix-a")
    assert (pair.scored, pair.base, pair.cand) == (True, 1.0, 0.0)  # the one scored attempt failed
