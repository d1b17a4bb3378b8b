"""Command line: `python -m collection_and_annotations <command>`.

Each command lives in its own module and only parses arguments; the work is in the library.
A command's module is imported only when that command runs, so the launcher (`cli.run`) and
`--help` do not pay for the plotting and statistics libraries `analyze` needs.
"""

from __future__ import annotations

import importlib

import click

# command name -> module of the same name under this package, holding a click command
COMMANDS = ("export", "evaluate", "analyze", "quals", "prolific", "serve", "judge")


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return getattr(importlib.import_module(f"{__name__}.{name}"), name)


@click.group(cls=LazyGroup)
def main() -> None:
    """ChatEvaluationPlatform tools (run a task with `python welcome.py conf=<name>`)."""
