"""Entry point: `python -m endstate.agent.worker JOB.json` (see endstate.agent._worker)."""

import sys

from endstate.agent._worker import main

if __name__ == "__main__":
    sys.exit(main())
