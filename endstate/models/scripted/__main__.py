"""`python -m endstate.models.scripted --tasks tasks --port 0`: serve the control arms standalone."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from endstate.models.scripted._policies import POLICIES
from endstate.models.scripted._server import ScriptedServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m endstate.models.scripted", description=__doc__)
    parser.add_argument("--tasks", type=Path, default=Path("tasks"), help="folder of task folders (default: tasks)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default: 0)")
    parser.add_argument("--log", action="store_true", help="log each request line to stderr")
    args = parser.parse_args(argv)
    if not args.tasks.is_dir():
        parser.error(f"tasks folder {args.tasks} does not exist")
    with ScriptedServer(args.tasks, host=args.host, port=args.port, log=args.log) as server:
        print(server.base_url, flush=True)
        print(f"per task: {server.base_url_for('<policy>', '<task_id>')}  (policies: {', '.join(POLICIES)})", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
