"""The error a provider adapter raises when a completion cannot be had.

    EndstateError
    └── ModelError      the provider failed and the SDK's retries did not cure it

A spec that cannot work at all (unknown provider, missing key) is a
ModelSpecError (endstate.errors), raised before any request is made. ModelError
is for what goes wrong once requests flow: the loop turns it into an ERROR
outcome for the task, never a FAIL.
"""

from __future__ import annotations

from endstate.errors import EndstateError

__all__ = ["ModelError", "model_error", "provider_says", "what_to_do", "redact"]


class ModelError(EndstateError):
    """A provider request that failed for good.

    The message names the provider, the base URL, the HTTP status (when there was
    a response) and what to do next. The attributes carry the same facts for code.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        base_url: str = "",
        status: int | None = None,
        retries: int = 0,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.base_url = base_url
        self.status = status
        #: HTTP retries the SDK made before giving up.
        self.retries = retries


def what_to_do(status: int | None, *, key_env: str | None = None, timeout_s: float | None = None) -> str:
    """The next step to suggest for a failed request, by HTTP status (None: no response)."""
    if status is None:
        return "check that the server is running and the base URL is right"
    if status in (401, 403):
        where = f"the key in {key_env}" if key_env else "the API key"
        return f"the provider refused the credentials: check {where}"
    if status == 404:
        return "no such model or endpoint: check the model name and that the base URL is the API root (often ending in /v1)"
    if status == 408:
        took = f" (--request-timeout {timeout_s:g})" if timeout_s else ""
        return f"the request timed out{took}: raise --request-timeout or rerun later"
    if status == 413:
        return "the request is too large for the provider: lower the task's context budget"
    if status == 429:
        return "rate limited or out of quota: wait and rerun, run fewer tasks at once, or raise --retries"
    if status >= 500:
        return "the provider failed on its side: rerun later or raise --retries"
    return "the provider refused the request: check the model name and the run settings"


def redact(text: str, secret: str, *, limit: int = 300) -> str:
    """`text` made safe for a message: the key masked, the length capped."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def model_error(
    spec: str,
    base_url: str,
    what: str,
    *,
    provider: str,
    status: int | None,
    retries: int,
    hint: str,
    secret: str = "",
) -> ModelError:
    """A ModelError whose message reads: spec at URL: what happened [after N retries]; what to do."""
    tried = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
    return ModelError(
        f"{spec} at {base_url}: {redact(what, secret)}{tried}; {hint}",
        provider=provider,
        base_url=base_url,
        status=status,
        retries=retries,
    )


def provider_says(body: object, fallback: str) -> str:
    """The provider's own error message from an error body, else `fallback`.

    Handles `{"error": {"message": ...}}` (OpenAI, Anthropic), the inner object
    alone (the openai SDK unwraps it), and `{"error": "..."}` (some gateways).
    """
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    return fallback
