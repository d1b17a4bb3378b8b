"""Per-bucket instructions are data: `<instructions_dir>/<bucket>.md` or `.html`."""

from __future__ import annotations

import warnings
from pathlib import Path

from collection_and_annotations.json_files import read_text


def load_instructions(directory: Path, bucket_names: list[str]) -> dict[str, str]:
    """HTML per bucket that has a file; requester-authored, so trusted. Warns once, naming
    the buckets without a file and where they were looked for: their workers would see the
    questions with no explanation of the task."""
    found: dict[str, str] = {}
    for name in bucket_names:
        html_file, md_file = directory / f"{name}.html", directory / f"{name}.md"
        if html_file.is_file():
            found[name] = read_text(html_file, "instructions file")
        elif md_file.is_file():
            found[name] = _render_markdown(read_text(md_file, "instructions file"))
    without = [name for name in bucket_names if name not in found]
    if without:
        warnings.warn(
            f"no instructions for bucket(s) {', '.join(without)}: looked for <bucket>.md or "
            f"<bucket>.html in {directory.resolve()}; workers see these questions without "
            "instructions (write the files, or set mephisto.blueprint.instructions_dir)",
            stacklevel=2)
    return found


def _render_markdown(text: str) -> str:
    """CommonMark with raw HTML kept; markdown-it loads only when a task has a `.md` file."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).render(text)
