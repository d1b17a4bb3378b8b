"""Per-bucket instructions are data: `<instructions_dir>/<bucket>.md` or `.html`."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from collection_and_annotations.json_files import read_text

_markdown = MarkdownIt("commonmark", {"html": True})


def load_instructions(directory: Path, bucket_names: list[str]) -> dict[str, str]:
    """HTML per bucket that has a file; requester-authored, so trusted."""
    found: dict[str, str] = {}
    if not directory.is_dir():
        return found
    for name in bucket_names:
        html_file, md_file = directory / f"{name}.html", directory / f"{name}.md"
        if html_file.is_file():
            found[name] = read_text(html_file, "instructions file")
        elif md_file.is_file():
            found[name] = _markdown.render(read_text(md_file, "instructions file"))
    return found
