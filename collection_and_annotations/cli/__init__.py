"""Command line: `python -m collection_and_annotations <command>`.

Each command lives in its own module and only parses arguments; the work is in the library.
A command's module is imported only when that command runs, so the launcher (`cli.launch`) and
`--help` do not pay for the plotting and statistics libraries `analyze` needs.
"""

from __future__ import annotations

import importlib

import click

# command name (a module of the same name under this package, holding a click command of that
# name) -> its one-line help, which `--help` lists without importing the module
COMMANDS = {
    "analyze": "Results of a task's answers: results.json and an HTML report.",
    "evaluate": "Compute automatic metrics over a JSONL file, overall and per tag.",
    "export": "Export a task's submissions, or the dialogues it collected.",
    "judge": "Answer a stored task's units with an LLM judge.",
    "prolific": "Prolific studies of tasks run with the prolific provider.",
    "quals": "List, grant and revoke qualifications; block and unblock workers.",
    "serve": "Open the dashboard of a stored task (review, bonuses, exports).",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return getattr(importlib.import_module(f"{__name__}.{name}"), name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their one-line help, without importing any command's module."""
        with formatter.section("Commands"):
            formatter.write_dl(sorted(COMMANDS.items()))


@click.group(cls=LazyGroup)
def main() -> None:
    """ChatEvaluationPlatform tools (run a task with `python welcome.py conf=<name>`)."""
