"""The judge's prompt: a template file (the default is `prompt_template.txt` beside this module;
a user's own replaces it) filled in per call. Its SHA-256 is stored with every call, so an
analysis says which prompt gave which answers (docs/judges.md, "The prompt template").

A template is plain text: the system message, a line holding only `---`, then the user
message (no such line: all of it is the user message). `${name}` placeholders are filled in;
`$$` is a dollar sign. The names are in FIELDS.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

from collection_and_annotations.errors import UserError
from collection_and_annotations.json_files import read_text
from collection_and_annotations.judges.forms import Form, target_name

DEFAULT_TEMPLATE = Path(__file__).with_name("prompt_template.txt")
FIELDS = {
    "task_title": "the task's title (mephisto.task.task_title)",
    "bucket": "the bucket's title (task_title in annotation_buckets.json)",
    "instructions": "the bucket's instructions file (as the worker page shows it), or nothing",
    "dialogue": "the conversation (two for a comparison), one numbered turn a line",
    "questions": "the bucket's questions, options and conditions",
    "answer_format": "what the JSON reply looks like, with its JSON schema",
}
SEPARATOR = re.compile(r"^---[ \t]*$", re.M)


@dataclass(frozen=True)
class PromptTemplate:
    system: Template | None
    user: Template
    sha256: str
    path: str

    @classmethod
    def load(cls, path: Path | None = None) -> PromptTemplate:
        """The template at `path` (None: the default), checked: every placeholder known."""
        path = path or DEFAULT_TEMPLATE
        text = read_text(path, "judge prompt template")
        parts = SEPARATOR.split(text, maxsplit=1)
        system, user = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
        for part in (system, user):
            if part is None:
                continue
            template = Template(part)
            if not template.is_valid():
                raise UserError("a '$' that is not a placeholder: write $$ for a dollar sign, "
                                "${name} for a field", path)
            unknown = sorted(set(template.get_identifiers()) - FIELDS.keys())
            if unknown:
                raise UserError(f"unknown placeholder(s) {', '.join(unknown)} (known: "
                                f"{', '.join(FIELDS)})", path)
        return cls(Template(system.strip()) if system and system.strip() else None,
                   Template(user.strip()), hashlib.sha256(text.encode()).hexdigest(),
                   "built-in" if path == DEFAULT_TEMPLATE else str(path))

    def messages(self, **fields: str) -> list[dict[str, str]]:
        """The chat messages of one call."""
        user = {"role": "user", "content": self.user.substitute(fields)}
        if self.system is None:
            return [user]
        return [{"role": "system", "content": self.system.substitute(fields)}, user]


def transcript(turns: Sequence[Sequence[str]], names: dict[str, str],
               title: str | None = None, persona: str | None = None) -> str:
    """A conversation as the prompt shows it: `Turn 2 (Bot): text`, numbered from 1."""
    lines = [title] if title else []
    if persona:
        lines.append(f"{names['system']}'s persona: {persona}")
    lines += [f"Turn {i + 1} ({names.get(speaker, speaker)}): {text}"
              for i, (speaker, text, *_) in enumerate(turns)]
    return "\n".join(lines)


def answer_format(form: Form) -> str:
    """How the reply must look: the keys, an example of their order, and the schema."""
    keys = ", ".join(json.dumps(target_name(t)) for t in form.targets)
    return ("Reply with one JSON object and nothing else (no prose, no code fence). Its keys: "
            f"{keys}. It follows this JSON schema:\n"
            + json.dumps(form.schema, ensure_ascii=False))


def instructions_block(html: str | None) -> str:
    return f"\nInstructions:\n{html.strip()}\n" if html and html.strip() else ""
