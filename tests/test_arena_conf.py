"""Launching an arena: its keys are checked before anything is written, with the key and why."""

from __future__ import annotations

import pytest
from arena_helpers import write_arena_conf
from helpers import BUCKETS, free_port, welcome

DEMO = "parrot: {type: demo, name: parrot}\nchatter: {type: demo, name: chatter}\n"


def _launch(tmp_path, conf):
    return welcome(f"conf={conf}", f"data_dir={tmp_path / 'data'}",
                   f"mephisto.architect.port={free_port()}", cwd=tmp_path)


@pytest.mark.parametrize(("extra", "bots", "said"), [
    ("    bots: [parrot, parot]\n", DEMO, "parot not in"),
    ("    bots: [parrot]\n", DEMO, "at least two bots"),
    ("", "parrot: {type: demo, name: parrot}\n", "at least two bots"),
    ("    bots: [parrot, parrot]\n", DEMO, "named more than once"),
    ("    pairs: adaptive\n", DEMO, "adaptive_battles: pairs: adaptive needs"),
    ("    adaptive_battles: 5\n", DEMO, "adaptive_battles is for pairs: adaptive"),
    ("    pairs: random\n", DEMO, "pairs 'random' is not one of balanced, adaptive"),
    ("    vote_labels: {left: Left}\n", DEMO, "left is not a choice"),
    ("    vote_labels: {tie: ''}\n", DEMO, "give the words for tie"),
    (f"    annotations_config_path: {BUCKETS}\n"
     "    do_interactive_offline_annotations: [[overall]]\n", DEMO,
     "annotation bucket 'overall' (do_interactive_*_annotations) is not in"),
    (f"    annotations_config_path: {BUCKETS}\n"
     "    do_interactive_offline_annotations: [[overall_quality, preference]]\n", DEMO,
     "so it cannot be in the first list"),
    (f"    annotations_config_path: {BUCKETS}\n"
     "    do_interactive_offline_annotations: [[overall_quality], [overall_quality], []]\n",
     DEMO, "has 3 lists but a unit has 2 conversation(s)"),
    ("    gold_pairs: ['parrot']\n", DEMO, "is not 'better>worse'"),
    ("    gold_pairs: ['parrot>nobody']\n", DEMO, "nobody not in model_opt_path"),
    ("    required_qualifications: [arena_block]\n", DEMO, "this task's block qualification"),
    ("    required_qualifications: ['  ']\n", DEMO, "required_qualifications: a name is empty"),
    ("    use_screening_task: true\n    passed_qualification_name: ok\n", DEMO,
     "screening_pairs is not set"),
    ("    screening_pairs: ['parrot>chatter']\n", DEMO, "is for use_screening_task: true"),
    ("    use_screening_task: true\n    passed_qualification_name: ok\n"
     "    screening_pairs: ['parrot>chatter']\n    required_qualifications: [ok]\n", DEMO,
     "what this task's own screening grants"),
])
def test_a_bad_key_fails_before_anything_is_written(tmp_path, extra, bots, said):
    done = _launch(tmp_path, write_arena_conf(tmp_path, bots, extra=extra))
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert not (tmp_path / "data" / "cep.sqlite3").exists()


def test_an_unknown_vote_mode_is_refused(tmp_path):
    done = _launch(tmp_path, write_arena_conf(tmp_path, DEMO, vote="sometimes"))
    assert done.returncode == 2
    assert "vote 'sometimes' is not one of per_turn, end" in done.stderr


def test_a_number_out_of_range_names_the_key(tmp_path):
    done = _launch(tmp_path, write_arena_conf(tmp_path, DEMO, battles_per_pair=0))
    assert done.returncode == 2 and "battles_per_pair" in done.stderr
