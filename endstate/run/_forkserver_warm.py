"""The fork server's warm-up: its last preload, and the one module whose import does work.

The fork server can only import modules by name, so this module exists for it alone
(see `_forkserver.preload_for`); nothing else imports it. Importing it makes one
in-memory request through the OpenAI adapter with the agent's tools, so every worker
forked afterwards starts with the SDK's lazy work done. Best effort: a failure only
costs the time back.
"""

from __future__ import annotations

import contextlib

from endstate.agent import TOOLS
from endstate.models import warm_openai

with contextlib.suppress(Exception):
    warm_openai(list(TOOLS))
