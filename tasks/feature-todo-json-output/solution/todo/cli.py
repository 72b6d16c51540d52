"""Command line: python -m todo [--file PATH] COMMAND ..."""

from __future__ import annotations

import argparse
import sys
from datetime import date

from .query import SORT_KEYS, STATUSES, select, sort_tasks
from .render import render_detail, render_json, render_list, task_json
from .store import TaskStore

FORMATS = ("text", "json")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("--file", default="todo.json", help="where the tasks are kept")
    commands = parser.add_subparsers(dest="command", required=True)

    add = commands.add_parser("add", help="add a task")
    add.add_argument("title")
    add.add_argument("--due", type=date.fromisoformat)
    add.add_argument("--tag", action="append", default=[], dest="tags")
    add.add_argument("--priority", type=int, choices=(1, 2, 3), default=2)

    for name in ("done", "rm"):
        cmd = commands.add_parser(name)
        cmd.add_argument("id", type=int)

    listing = commands.add_parser("list", help="list tasks")
    listing.add_argument("--status", choices=STATUSES, default="open")
    listing.add_argument("--tag")
    listing.add_argument("--sort", choices=SORT_KEYS, default="id")
    listing.add_argument("--format", choices=FORMATS, default="text")

    show = commands.add_parser("show", help="show one task")
    show.add_argument("id", type=int)
    show.add_argument("--format", choices=FORMATS, default="text")
    return parser


def main(argv=None, out=None, err=None, today: date | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    today = today or date.today()
    args = build_parser().parse_args(argv)
    store = TaskStore(args.file)
    try:
        if args.command == "add":
            task = store.add(args.title, due=args.due, tags=args.tags, priority=args.priority)
            store.save()
            out.write(f"added {task.id}\n")
        elif args.command == "done":
            store.complete(args.id)
            store.save()
            out.write(f"completed {args.id}\n")
        elif args.command == "rm":
            store.remove(args.id)
            store.save()
            out.write(f"removed {args.id}\n")
        elif args.command == "list":
            tasks = sort_tasks(select(store.all(), args.status, args.tag), args.sort)
            if args.format == "json":
                out.write(render_json([task_json(task, today) for task in tasks]))
            else:
                out.write(render_list(tasks, today))
        elif args.command == "show":
            task = store.get(args.id)
            if args.format == "json":
                out.write(render_json(task_json(task, today)))
            else:
                out.write(render_detail(task, today))
    except (KeyError, ValueError) as exc:
        err.write(f"error: {exc.args[0]}\n")
        return 1
    return 0
