"""Making tasks: the blank skeleton, tasks new from a fix, SWE-bench and Harbor import, Harbor export, test-command and image detection."""

from endstate.authoring._blank import new_blank_task
from endstate.authoring._fix import DEFAULT_TEST_GLOBS
from endstate.authoring._harbor import base_images, import_harbor
from endstate.authoring._harborexport import export_harbor_task
from endstate.authoring._new import new_task_from_fix
from endstate.authoring._swebench import import_swebench, keep_checked
from endstate.authoring._swebenchdata import Selection

__all__ = [
    "DEFAULT_TEST_GLOBS",
    "Selection",
    "base_images",
    "export_harbor_task",
    "import_harbor",
    "import_swebench",
    "keep_checked",
    "new_blank_task",
    "new_task_from_fix",
]
