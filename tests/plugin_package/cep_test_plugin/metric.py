"""A metric: exclamation marks per response."""

import numpy as np

from collection_and_annotations.metrics import Direction, Kind, MetricSpec
from collection_and_annotations.metrics.base import Metric, Score, Statistics


class Exclamations(Metric):
    signature = "exclamations"

    def statistics(self, segments, progress=None):
        return Statistics.complete(np.array([text.count("!") for text in segments.texts], float))

    def score(self, rows):
        return Score(float(rows.mean()))


EXCLAMATIONS = MetricSpec("exclamations", Kind.RESPONSES, "Exclamation marks per response.",
                          Direction.HIGHER, Exclamations)
