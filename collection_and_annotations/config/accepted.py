"""Keys a conf may set that this version accepts but does not use, and why.

The original project's confs and Mephisto 1.x's arguments load unchanged; a key that would
silently do nothing gets one warning naming it and the reason, so nobody relies on it unawares.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

_NO_QUALIFICATIONS = "Mephisto qualifications are not built"
_BUILT_IN_PAGE = "the worker page is built in; task text comes from task_description and " \
                 "instructions_dir"
_LIVE_CHAT = "live dialogue collection is not built yet"
_SERVER = "this version serves the task itself (architect 'local')"
_PROVIDER = "workers come through local links"

# dotted key -> why it is not used
UNUSED_KEYS: dict[str, str] = {
    "mephisto.blueprint.context_seed": "deprecated: the original project never used it",
    "mephisto.blueprint.units_per_assignment": "deprecated: the original project never used "
                                               "it; one data line is one unit",
    "mephisto.blueprint.onboarding_qualification": _NO_QUALIFICATIONS,
    "mephisto.blueprint.onboard_task_data_path": "onboarding is screening here: use_screening_task"
                                                 " and screen_json",
    "mephisto.blueprint.max_onboard_time": "onboarding is screening here",
    "mephisto.blueprint.task_config_path": "paths are written in full, e.g. with ${task_dir}",
    "mephisto.blueprint.left_pane_text_path": _BUILT_IN_PAGE,
    "mephisto.blueprint.chat_startup_instructions_path": _LIVE_CHAT,
    "mephisto.blueprint.final_rating_question": _LIVE_CHAT,
    "mephisto.blueprint.override_opt": f"{_LIVE_CHAT} (ParlAI context generator options)",
    "mephisto.blueprint.num_conversations": "derived from conversations_needed_string",
    "mephisto.blueprint.world_file": f"{_LIVE_CHAT} (ParlAI worlds)",
    "mephisto.blueprint.custom_source_dir": _BUILT_IN_PAGE,
    "mephisto.blueprint.custom_source_bundle": _BUILT_IN_PAGE,
    "mephisto.blueprint.preview_source": _BUILT_IN_PAGE,
    "mephisto.blueprint.task_description_file": _BUILT_IN_PAGE,
    "mephisto.blueprint.task_source_review": _BUILT_IN_PAGE,
    "mephisto.blueprint.extra_source_dir": _BUILT_IN_PAGE,
    "mephisto.blueprint.tips_location": "worker tips are not built",
    "mephisto.blueprint.context_csv": f"{_LIVE_CHAT} (ParlAI contexts)",
    "mephisto.blueprint.context_jsonl": f"{_LIVE_CHAT} (ParlAI contexts)",
    "mephisto.blueprint.data_json": "task data is read from data_jsonl",
    "mephisto.blueprint.data_csv": "task data is read from data_jsonl",
    "mephisto.task.task_lifetime_in_seconds": "a run lasts until stopped or completed",
    "mephisto.task.no_submission_patience": "a run lasts until stopped or completed",
    "mephisto.task.submission_timeout": "a unit is done when its submission is stored",
    "mephisto.task.post_install_script": _BUILT_IN_PAGE,
    "mephisto.task.force_rebuild": _BUILT_IN_PAGE,
    "mephisto.task.resume_incomplete_run": "a run with the same task_name always continues",
    "mephisto.architect.server_type": _SERVER,
    "mephisto.architect.server_source_path": _SERVER,
    "mephisto.architect.should_run_server": _SERVER,
    **{f"mephisto.architect.{key}": f"{_SERVER}; heroku is not supported"
       for key in ("use_hobby", "heroku_team", "heroku_app_name", "heroku_config_args")},
    **{f"mephisto.architect.{key}": f"{_SERVER}; ec2 is not supported"
       for key in ("instance_type", "subdomain", "profile_name", "_deploy_type")},
    "mephisto.provider.requester_name": f"{_PROVIDER}: no requester account is needed",
    "mephisto.provider.ui_base_url": f"{_PROVIDER}; links use mephisto.architect.hostname",
    **{f"mephisto.provider.prolific_{key}": f"{_PROVIDER}; the prolific provider does not "
       "use it (docs/providers.md)"
       for key in ("external_study_url", "id_option",
                   "eligibility_requirements", "workspace_name", "project_name",
                   "allow_list_group_name", "block_list_group_name")},
    "mephisto.database._database_type": "the database is set with database_url (SQLite "
                                        "under data_dir by default)",
}
DEPRECATED_KEYS = ("mephisto.blueprint.context_seed", "mephisto.blueprint.units_per_assignment")


class UnusedKeyWarning(UserWarning):
    """A conf key this version accepts but does not use."""


class DeprecatedKeyWarning(UnusedKeyWarning):
    """A conf key the original project accepted but never used."""


def override_keys(overrides: list[str]) -> set[str]:
    """The dotted keys that command-line overrides (`key=v`, `+key=v`, `~key`) set."""
    return {o.lstrip("+~").split("=", 1)[0] for o in overrides}


def _is_set(tree: Any, dotted_key: str) -> bool:
    for part in dotted_key.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return tree is not None


def warn_unused_keys(
    file_keys: dict[str, Any], overrides: list[str], path: Path, line_of: Any
) -> None:
    """One warning per unused key the conf file (`file_keys`, unresolved) or the command line
    sets; `line_of(path, key)` finds its line."""
    from_cli = override_keys(overrides)
    for key, why in UNUSED_KEYS.items():
        if key in from_cli:
            where = f"{key} (set on the command line)"
        elif _is_set(file_keys, key):
            line = line_of(path, key)
            where = f"{path}:{line}: {key}" if line else f"{path}: {key}"
        else:
            continue
        category = DeprecatedKeyWarning if key in DEPRECATED_KEYS else UnusedKeyWarning
        warnings.warn(f"{where} is accepted but not used ({why}); remove it", category,
                      stacklevel=3)
