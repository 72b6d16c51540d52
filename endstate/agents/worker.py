"""Entry point: `python -m endstate.agents.worker JOB.json` runs a saved foreign-agent job by hand."""

import sys

from endstate.agent import worker_main as main
from endstate.agents._run import run_foreign_job

if __name__ == "__main__":
    sys.exit(main(run=run_foreign_job))
