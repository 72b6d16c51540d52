"""A failed request's next step names the command-line option, not a settings field."""

from endstate.models._errors import what_to_do


def test_next_steps_name_the_flags():
    assert what_to_do(429).endswith("or raise --retries")
    assert what_to_do(503).endswith("rerun later or raise --retries")
    assert what_to_do(408, timeout_s=120) == "the request timed out (--request-timeout 120): raise --request-timeout or rerun later"
    for status in (408, 429, 500):
        assert "max_retries" not in what_to_do(status, timeout_s=5) and "timeout_s" not in what_to_do(status, timeout_s=5)
