"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from relay.config_schema import SCHEMA, check_file, validate

print(json.dumps({
    "schema": see(lambda: {key: [kind.__name__, default] for key, (kind, default) in sorted(SCHEMA.items())}),
    "suggest": see(lambda: validate({"digest.hr": "7", "queue.batchsize": "5", "sms.country": "NL"})),
    "file": see(lambda: check_file("\n".join(["queue.max_size = lots", "retry.jitter = sometimes",
                                               "smtp.port = 25", "metrics.prefix = rl"]))),
}, sort_keys=True))
