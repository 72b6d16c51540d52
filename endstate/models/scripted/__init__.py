"""The scripted control arms (`scripted/null`, `scripted/reference`) and their local server."""

from endstate.models.scripted._bashblock import ACTION_FORMAT_HEADER
from endstate.models.scripted._policies import POLICIES
from endstate.models.scripted._server import ScriptedServer

__all__ = ["ScriptedServer", "POLICIES", "ACTION_FORMAT_HEADER"]
