"""Every setting relay reads, with its type and default, and a checker for config files."""

from __future__ import annotations

import difflib

from relay.settings import Settings

#: key -> (type, default), as the component that reads the key asks for it.
SCHEMA: dict[str, tuple[type, object]] = {
    "audit.path": (str, "audit.log"),
    "audit.redact_fields": (list, ["password", "token"]),
    "audit.retention_days": (int, 90),
    "digest.enabled": (bool, True),
    "digest.hour": (int, 7),
    "digest.max_items": (int, 25),
    "metrics.enabled": (bool, False),
    "metrics.flush_interval": (float, 15.0),
    "metrics.prefix": (str, "relay"),
    "queue.batch_size": (int, 50),
    "queue.max_size": (int, 10_000),
    "queue.poll_interval": (float, 0.5),
    "ratelimit.burst": (int, 20),
    "ratelimit.exempt_domains": (list, []),
    "ratelimit.per_minute": (int, 120),
    "retry.base_delay": (float, 2.0),
    "retry.jitter": (bool, True),
    "retry.max_attempts": (int, 5),
    "retry.max_delay": (float, 300.0),
    "sms.countries": (list, ["NL", "BE", "DE"]),
    "sms.max_parts": (int, 3),
    "sms.sender_id": (str, "RELAY"),
    "smtp.host": (str, "localhost"),
    "smtp.port": (int, 25),
    "smtp.starttls": (bool, True),
    "smtp.timeout": (float, 10.0),
    "smtp.username": (str, ""),
    "storage.compress": (bool, False),
    "storage.max_attachment_mb": (float, 10.0),
    "storage.root": (str, "var/relay"),
    "templates.default_locale": (str, "en"),
    "templates.dir": (str, "templates"),
    "templates.locales": (list, ["en"]),
    "templates.strict": (bool, False),
    "webhooks.max_body_kb": (int, 256),
    "webhooks.retries": (int, 5),
    "smtp.password": (str, ""),
    "webhooks.verify_tls": (bool, True),
}

_GETTERS = {str: "get_str", int: "get_int", float: "get_float", bool: "get_bool", list: "get_list"}


def defaults() -> dict[str, object]:
    """Every key with its default; list defaults are fresh copies."""
    return {key: list(default) if isinstance(default, list) else default
            for key, (_, default) in SCHEMA.items()}


def validate(values: dict[str, str]) -> list[str]:
    """Problems with a configuration, one line each, in key order."""
    settings = Settings(values)
    problems = []
    for key in sorted(values):
        if key not in SCHEMA:
            close = difflib.get_close_matches(key, list(SCHEMA), n=1)
            problems.append(f"{key}: unknown setting" + (f" (did you mean {close[0]}?)" if close else ""))
            continue
        kind, default = SCHEMA[key]
        try:
            getattr(settings, _GETTERS[kind])(key, default)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def check_file(text: str) -> list[str]:
    """`validate` for the text of a relay.conf file."""
    return validate(Settings.from_text(text).values)
