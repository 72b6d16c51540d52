import pytest

from endstate.errors import CommandWedged, GraderContractError
from endstate.grading import Outcome, Verdict, resolve, run_grader


def good(sandbox, path="a.py"):
    return Verdict.ok(path)


def peeks(sandbox, transcript):
    return Verdict.ok()


def peeks_final(sandbox, final_text=""):
    return Verdict.ok()


def wrong_first(state):
    return Verdict.ok()


def keyword_only_sandbox(*, sandbox):
    return Verdict.ok()


def takes_kwargs(sandbox, **anything):
    return Verdict.ok()


def raises(sandbox):
    raise RuntimeError("boom")


def returns_bool(sandbox):
    return True


HERE = __name__


def test_good_grader_resolves_with_args():
    grader = resolve(f"{HERE}:good", {"path": "b.py"})
    assert grader(object()).reason == "b.py"


@pytest.mark.parametrize("name, needle", [
    ("peeks", "'transcript'"),
    ("peeks_final", "'final_text'"),
    ("wrong_first", "first parameter"),
    ("keyword_only_sandbox", "first parameter"),
    ("takes_kwargs", "**anything"),
])
def test_contract_refusals_name_grader_and_parameter(name, needle):
    with pytest.raises(GraderContractError) as caught:
        resolve(f"{HERE}:{name}")
    assert needle in str(caught.value) and name in str(caught.value)


def test_unknown_argument_and_bad_paths():
    with pytest.raises(GraderContractError, match="no argument 'colour'"):
        resolve(f"{HERE}:good", {"colour": 1})
    with pytest.raises(GraderContractError, match="does not import"):
        resolve("no_such_module_xyz:grade")
    with pytest.raises(GraderContractError, match="has no 'missing'"):
        resolve(f"{HERE}:missing")


def test_a_raising_grader_is_an_error_never_a_pass():
    verdict = run_grader(resolve(f"{HERE}:raises"), object())
    assert verdict.outcome is Outcome.ERROR and "boom" in verdict.reason
    verdict = run_grader(resolve(f"{HERE}:returns_bool"), object())
    assert verdict.outcome is Outcome.ERROR


def wedges(sandbox):
    raise CommandWedged("command in container abc outlived its deadline by 30s; the container was killed")


def test_a_hung_runner_under_a_grader_is_no_verdict_but_a_fault_of_the_machinery():
    """The one exception a grader does not turn into ERROR: the task is run again (run/_faults.py)."""
    with pytest.raises(CommandWedged):
        run_grader(resolve(f"{HERE}:wedges"), object())
