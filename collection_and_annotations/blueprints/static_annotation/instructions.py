"""Per-bucket instructions are data: `<instructions_dir>/<bucket>.md` or `.html`."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

_markdown = MarkdownIt("commonmark", {"html": True})


def load_instructions(directory: Path, bucket_names: list[str]) -> dict[str, str]:
    """HTML per bucket that has a file; requester-authored, so trusted."""
    found: dict[str, str] = {}
    if not directory.is_dir():
        return found
    for name in bucket_names:
        html_file, md_file = directory / f"{name}.html", directory / f"{name}.md"
        if html_file.is_file():
            found[name] = html_file.read_text(encoding="utf-8")
        elif md_file.is_file():
            found[name] = _markdown.render(md_file.read_text(encoding="utf-8"))
    return found
