"""model_opts.yaml: opt strings read as ParlAI reads them, mappings, lines in every error, the
original's own file with its typo, and conversations_needed_string."""

from __future__ import annotations

import pytest

from collection_and_annotations.bots import kind_of, load_model_opts, nicknames_in
from collection_and_annotations.bots import parse_conversations_needed as needed
from collection_and_annotations.bots.limits import ReplyLimits
from collection_and_annotations.bots.model_opts import BotSpecWarning, check_spec_problems
from collection_and_annotations.bots.opt_string import parse_opt_string
from collection_and_annotations.errors import UserError

from .conftest import line_of, write_opts


def test_opt_string_like_parlai():
    parsed = parse_opt_string("--model-file zoo:blender/blender_90M/model --inference topk "
                              "--topk 40 --skip_generation False -t blended_skill_talk "
                              "--interactive-mode --beam-size=3 --temperature -0.5 -m x")
    assert parsed.opt == {"model_file": "zoo:blender/blender_90M/model", "inference": "topk",
                          "topk": 40, "skip_generation": False, "task": "blended_skill_talk",
                          "interactive_mode": True, "beam_size": 3, "temperature": -0.5,
                          "model": "x"}
    assert parsed.problems == []
    assert parsed.args[:2] == ["--model-file", "zoo:blender/blender_90M/model"]
    assert parse_opt_string("-mf zoo:a/b --search-server None").opt == {
        "model_file": "zoo:a/b", "search_server": "None"}


def test_single_dash_long_option_is_named():
    parsed = parse_opt_string("-model-file zoo:blenderbot2/blenderbot2_400M/model --x 1")
    assert parsed.problems == ["'-model-file' has a single dash: ParlAI reads it as "
                               "'-m odel-file'; did you mean --model-file?"]
    assert parsed.opt == {"x": 1}
    assert "did you mean --knowledge" in parse_opt_string("-knowledge a").problems[0]
    assert parse_opt_string("--a b stray").problems == ["'stray' is not the value of an option"]


def test_original_model_opts_load_with_lines_and_typo(cep_fixtures):
    path = cep_fixtures / "task_config" / "model_opts.yaml"
    specs = load_model_opts(path)
    assert len(specs) == 16
    assert specs["blender2_400M"].source.line == line_of(path, "blender2_400M:")
    assert specs["emora"].parsed.opt == {"model": "internal:emora_agent"}
    pairs = needed("rerank_blender|blender2_3B:20,rerank_blender|bart_fid_rag_bcb:20", specs)
    assert pairs == {("rerank_blender", "blender2_3B"): 20,
                     ("rerank_blender", "bart_fid_rag_bcb"): 20}
    with pytest.warns(BotSpecWarning, match=rf"model_opts.yaml:{specs['blender2_400M'].source.line}"
                      r": bot 'blender2_400M' \(not used.*did you mean --model-file\?"):
        check_spec_problems(specs, nicknames_in(pairs))
    with pytest.raises(UserError) as error:
        check_spec_problems(specs, ["blender2_400M"])
    assert str(error.value).startswith(f"{path}:16: bot 'blender2_400M': '-model-file'")
    assert "did you mean --model-file?" in str(error.value)


def test_original_collect_conf_builds_with_the_typo_as_a_warning(cep_fixtures):
    from collection_and_annotations.blueprints import build_blueprint
    from collection_and_annotations.config.loader import load_run_config

    conf = cep_fixtures / "hydra_configs" / "conf" / "collect_dialogues.yaml"
    with pytest.warns(UserWarning):
        cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    with pytest.warns(BotSpecWarning, match="blender2_400M"):
        build_blueprint(cfg)
    with pytest.warns(UserWarning):
        broken = load_run_config(str(conf), [
            f"task_dir={cep_fixtures}",
            "mephisto.blueprint.conversations_needed_string=blender2_400M:5"]).config
    with pytest.raises(UserError, match=r"model_opts.yaml:16: .*did you mean --model-file"):
        build_blueprint(broken)


def test_conversations_needed_errors_name_their_source(tmp_path):
    path, specs = write_opts(tmp_path, """\
        a: --model internal:a
        b: {type: demo, name: parrot}
        """)
    assert needed("a:3, a|b:2", specs) == {("a",): 3, ("a", "b"): 2}
    with pytest.raises(UserError) as error:
        needed("a|c:2", specs, source="conf.yaml conversations_needed_string")
    assert str(error.value) == (f"conf.yaml conversations_needed_string: bot 'c' is not in "
                                f"{path} (known: a, b)")
    with pytest.raises(UserError, match="'a:x' must be 'bot:count'"):
        needed("a:x", specs)
    assert needed("x:1", {"x": "old callers pass a dict of strings"}) == {("x",): 1}


def test_mapping_specs_keep_key_lines(tmp_path):
    path, specs = write_opts(tmp_path, """\
        # a comment
        local:
          type: openai
          base_url: http://127.0.0.1:8000/v1
          model: m
          params: {temperature: 0.7}
        folded: >
          --model-file zoo:x/y
        """)
    assert specs["local"].source.line == 2
    assert specs["local"].key_lines["params"] == 6
    assert specs["local"].options["params"] == {"temperature": 0.7}
    assert specs["folded"].parsed.opt == {"model_file": "zoo:x/y"}
    assert specs["local"].error("bad", "model").line == 5


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("a: {type: demo}\na: {type: demo}\n", 2, "declared twice"),
    ("a:\n  name: x\n", 1, "needs 'type'"),
    ("a: 3\n", 1, "must be a ParlAI opt string"),
    ("a|b: --model x\n", 1, "without '|'"),
    ("a: --model x\nb: [unclosed\n", 3, "invalid YAML"),
    ("- a\n", 1, "map each bot nickname"),
    ("a:\n  type: demo\n  name: parrot\n  reply_timeout: 0\n", 4,
     "'reply_timeout' is the seconds a reply may take in all, more than 0"),
    ("a: {type: openai, reply_timeout: 90000}\n", 1, "at most 86400"),
    ("a: {type: demo, name: parrot, max_reply_chars: 2.5}\n", 1,
     "'max_reply_chars' is the longest reply in characters, a whole number"),
    ("a: {opt: --model internal:x, max_reply_chars: 0}\n", 1, "of at least 1"),
    ("a: {opt: --model internal:x, type: python}\n", 1, "remove 'type'"),
    ("a: {opt: --model internal:x, colour: red}\n", 1,
     "unknown key 'colour' for a spec with 'opt' (known: max_reply_chars, opt, reply_timeout)"),
    ("a: {opt: 5}\n", 1, "'opt' must be a ParlAI opt string"),
    ("a:\n  name: x\n", 1, "or 'opt' with a ParlAI opt string"),
])
def test_bad_model_opts_name_file_and_line(tmp_path, text, line, reason):
    path = tmp_path / "model_opts.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as error:
        load_model_opts(path)
    assert str(error.value).startswith(f"{path}:{line}: ") and reason in str(error.value)


def test_reply_limits_per_spec_with_defaults(tmp_path):
    _, specs = write_opts(tmp_path, """\
        plain: --model internal:recall
        limited: {opt: --model internal:recall --beam 2, reply_timeout: 30, max_reply_chars: 99}
        remote: {type: openai, base_url: http://h/v1, model: m, reply_timeout: 2.5}
        """)
    assert specs["plain"].limits == ReplyLimits(120.0, 10_000)
    assert specs["limited"].parsed.opt == {"model": "internal:recall", "beam": 2}
    assert specs["limited"].limits == ReplyLimits(30.0, 99)
    assert specs["remote"].limits == ReplyLimits(2.5, 10_000)


def test_kind_of_a_spec(tmp_path, context):
    agents = context.project_root / "parlai_internal" / "agents" / "mine"
    agents.mkdir(parents=True)
    (agents / "mine.py").write_text("class MineAgent: ...\n")
    _, specs = write_opts(tmp_path, """\
        demo: {type: demo, name: parrot}
        internal: --model internal:anything
        found: --model mine
        zoo: --model-file zoo:blender/blender_90M/model
        generator: --model transformer/generator --model-file /x
        """)
    kinds = {nickname: kind_of(spec, context) for nickname, spec in specs.items()}
    assert kinds == {"demo": "demo", "internal": "python", "found": "python", "zoo": "parlai",
                     "generator": "parlai"}
