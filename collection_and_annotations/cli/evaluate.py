"""`python -m collection_and_annotations evaluate`: automatic metrics over a JSONL file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click


def _list_metrics(context: click.Context, _: click.Parameter, value: bool) -> None:
    if not value or context.resilient_parsing:
        return
    from collection_and_annotations.metrics import default_registry
    from collection_and_annotations.plugins import PluginError

    try:
        specs = list(default_registry())
    except PluginError as exc:
        raise click.ClickException(str(exc)) from exc
    for spec in specs:
        directions = set(spec.direction.values()) if spec.components else {spec.direction}
        direction = str(directions.pop()) if len(directions) == 1 else "mixed"
        click.echo(f"{spec.name:22} {spec.kind:16} {direction:9} {spec.description}")
    context.exit()


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command()
@click.option(
    "--input",
    "input_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL of predictions ({hypothesis, references, tags}) or task-data dialogues.",
)
@click.option(
    "--metrics",
    "metric_names",
    help="Comma-separated metric names, e.g. bleu,chrf,richness (see --list-metrics). "
    "Required unless --conf names a task conf with metrics.names.",
)
@click.option(
    "--conf",
    "conf",
    help="A task conf (name or path); its metrics.names, metrics.perf_metric and "
    "metrics.perf_by_tag are the defaults of --metrics, --perf-metric and --by.",
)
@click.option(
    "--by",
    multiple=True,
    help="Tag or field to break results down by (bot, annotation_tasks, ...); repeat or "
    "comma-separate. Default: the keys of the records' `tags` objects.",
)
@click.option(
    "--perf-metric",
    help="Metric used for ranking: NAME, or NAME.COMPONENT such as richness.msttr. "
    "Default: the first selected metric with a single value.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the JSON results to this file (default: standard output).",
)
@click.option(
    "--external",
    multiple=True,
    metavar="NAME[:lower]=COMMAND",
    help="Add a metric computed by a command that speaks cdec's mteval protocol, e.g. "
    "'mybleu=python -m collection_and_annotations.metrics.serve bleu'; select it in --metrics.",
)
@click.option(
    "--external-timeout",
    default=60.0,
    show_default=True,
    help="Seconds to wait for each answer of an external evaluator.",
)
@click.option(
    "--skip-invalid", is_flag=True, help="Leave malformed lines out (reported) instead of failing."
)
@click.option("--no-progress", is_flag=True, help="Never show progress bars.")
@click.option(
    "--list-metrics",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_list_metrics,
    help="List the available metrics and exit.",
)
def evaluate(
    input_path: Path,
    metric_names: str | None,
    conf: str | None,
    by: tuple[str, ...],
    perf_metric: str | None,
    output: Path | None,
    external: tuple[str, ...],
    external_timeout: float,
    skip_invalid: bool,
    no_progress: bool,
) -> None:
    """Compute automatic metrics over a JSONL file, overall and per tag, as JSON."""
    from collection_and_annotations.metrics import (
        Direction,
        MetricError,
        compute_metrics,
        default_registry,
        read_jsonl,
    )
    from collection_and_annotations.metrics.mteval import external_spec
    from collection_and_annotations.plugins import PluginError

    if conf is not None:
        metric_names, perf_metric, by = _from_conf(conf, metric_names, perf_metric, by)
    if not metric_names:
        raise click.UsageError("name the metrics with --metrics (or --conf with metrics.names)")
    try:
        registry = default_registry()
        for option in external:
            name, separator, command = option.partition("=")
            name, _, direction = name.strip().partition(":")
            if not separator or not name or not command.strip() or direction not in ("", "lower"):
                raise click.BadParameter(
                    f"expected NAME=COMMAND or NAME:lower=COMMAND, got {option!r}",
                    param_hint="--external",
                )
            spec = external_spec(
                name, command, Direction.LOWER if direction else Direction.HIGHER,
                external_timeout,
            )
            registry.add(name, spec, origin=f"--external {name}")
        segments = read_jsonl(
            input_path,
            skip_invalid=skip_invalid,
            warn=lambda message: click.echo(f"warning: {message}", err=True),
            progress=not no_progress,
        )
        results = compute_metrics(
            segments,
            metric_names,
            perf_metric,
            _split(by) if by else None,
            registry=registry,
            progress=not no_progress,
        )
    except (MetricError, PluginError) as exc:
        raise click.ClickException(str(exc)) from exc
    text = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    for name, result in results["metrics"].items():
        click.echo(f"{name}: {_short(result['value'])} (n={result['n']})", err=True)
    click.echo(f"results written to {output}", err=True)


def _from_conf(
    conf: str, metric_names: str | None, perf_metric: str | None, by: tuple[str, ...]
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """Command-line options win; the conf's `metrics` section fills what they leave out."""
    from collection_and_annotations.config.loader import load_run_config
    from collection_and_annotations.errors import UserError

    try:
        selection = load_run_config(conf).config.metrics
    except UserError as exc:
        raise click.ClickException(str(exc)) from None
    return (
        metric_names or ",".join(selection.names) or None,
        perf_metric or selection.perf_metric,
        by or tuple(selection.perf_by_tag),
    )


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in value.items())
    return f"{value:.4g}" if isinstance(value, float) else str(value)
