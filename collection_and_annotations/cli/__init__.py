"""Command line: `python -m collection_and_annotations <command>`.

Each command lives in its own module and only parses arguments; the work is in the library.
"""

import click

from collection_and_annotations.cli.analyze import analyze
from collection_and_annotations.cli.evaluate import evaluate
from collection_and_annotations.cli.export import export
from collection_and_annotations.cli.quals import quals


@click.group()
def main() -> None:
    """ChatEvaluationPlatform tools (run a task with `python welcome.py conf=<name>`)."""


main.add_command(export)
main.add_command(evaluate)
main.add_command(analyze)
main.add_command(quals)
