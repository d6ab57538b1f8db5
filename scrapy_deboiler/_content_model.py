"""The content model: the block scorer that ``benchmarks/train_content.py``
writes as plain data (``content_model.json``), and its loading."""

from __future__ import annotations

import json
import math
import os
from array import array
from operator import mul

# None when not built or switched off (the Python walks give the same scores)
from ._compiled import speedups as _speedups
from ._decide import LISTING_THRESHOLD, STAGE2_FEATURES
from ._features import FEATURE_COUNT, second_pass

__all__ = ["MODEL_FORMAT", "MODEL_VERSION", "MODEL_VERSIONS", "ContentModel", "ContentModelError", "default_model",
           "model_path"]

#: What a content model file says it is (``format``, ``version``); its
#: ``features`` must be ``FEATURE_COUNT``, the row layout this code builds.
#: Version 2 is the first stage alone; 3 adds a ``stage2`` section
#: (``_decide.decide``), which version-2 readers must not ignore. This
#: release reads both and ships version 2 (docs/content-model.md, "A second
#: stage": measured, not shipped).
MODEL_FORMAT = "scrapy-deboiler-content-model"
MODEL_VERSION = 2
MODEL_VERSIONS = (2, 3)


class ContentModelError(Exception):
    """The content model is missing, unreadable, corrupt or made for another
    version: a setup error, raised before any page is cleaned."""


def model_path() -> str:
    """The content model shipped in the package."""
    return os.path.join(os.path.dirname(__file__), "content_model.json")


class ContentModel:
    """The block scorer: a gradient-boosted tree ensemble (``kind: trees``)
    or two logistic regressions (``kind: linear``, the second seeing its
    neighbours' first scores), as ``benchmarks/train_content.py`` writes.

    A trees model may hold a second ensemble, ``single``, trained on pages
    of sites without a site model only: a page without a site model
    (``single=True``) gets ``weight`` of its score and the shared trees the
    rest. Why: the shared trees learn mostly from pages cleaned with a site
    model, where what is left of a template is little; alone on its page, a
    teaser list or a ticker is not. Out of fold, weight 0.5: Scrapinghub's
    single pages ROUGE-LSum F1 / shingle F1 0.951 / 0.955 -> 0.952 / 0.957,
    CleanEval, dragnet and L3S-GN1 pages of one-page sites 0.908 / 0.916 ->
    0.912 / 0.919; pages with a site model are scored as before
    (docs/measurements.md, "Single pages and small sites")."""

    def __init__(self, data: dict) -> None:
        self.threshold = float(data["threshold"])
        self.kind = data.get("kind", "linear")
        self.single: _Trees | None = None
        self.single_weight = 0.0
        self.stage2: _Trees | None = None
        self.stage2_low = LISTING_THRESHOLD
        if data.get("stage2") is not None:
            stage2 = data["stage2"]
            if int(stage2["features"]) != STAGE2_FEATURES:
                raise ValueError("content model: stage 2 reads another feature set")
            self.stage2 = _Trees(stage2["trees"], STAGE2_FEATURES)
            self.stage2_low = float(stage2["low"])
        if self.kind == "trees":
            self.trees = _Trees(data["trees"])
            if data.get("single") is not None:
                self.single = _Trees(data["single"]["trees"])
                self.single_weight = float(data["single"]["weight"])
                if not 0.0 <= self.single_weight <= 1.0:
                    raise ValueError("content model: single-page weight out of [0, 1]")
        else:
            self.first = self._fold(data["first"])
            self.second = self._fold(data["second"])

    @staticmethod
    def _fold(layer: dict) -> tuple[float, list[float]]:
        """Standardisation folded into the weights: z = bias + w . x."""
        w = [wi / s for wi, s in zip(layer["weights"], layer["std"])]
        return -sum(wi * m for wi, m in zip(w, layer["mean"])), w

    @classmethod
    def load(cls, path: str | None = None) -> "ContentModel":
        """Read and check a model file; any problem is a ``ContentModelError``
        naming the file (a setup error, not one page's)."""
        path = path or model_path()
        try:
            with open(path, "rb") as f:
                data = json.loads(f.read())
        except FileNotFoundError:
            raise ContentModelError(f"content model {path} is missing; reinstall scrapy-deboiler") from None
        except (OSError, ValueError) as e:
            raise ContentModelError(f"content model {path} is unreadable: {e}") from None
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ContentModelError(f"content model {path} is not a {MODEL_FORMAT} file")
        if (data.get("version") not in MODEL_VERSIONS or data.get("features") != FEATURE_COUNT
                or (data.get("version") == 3) != ("stage2" in data)):
            raise ContentModelError(
                f"content model {path} is from another version of scrapy-deboiler (format version "
                f"{data.get('version')!r} with {data.get('features')!r} features; this version reads "
                f"versions {' and '.join(map(str, MODEL_VERSIONS))} with {FEATURE_COUNT}, 3 with a stage2 "
                "section)")
        try:
            return cls(data)
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise ContentModelError(f"content model {path} is corrupt: {type(e).__name__}: {e}") from None

    @staticmethod
    def _score(layer: tuple[float, list[float]], rows: list[list[float]]) -> list[float]:
        bias, w = layer
        return [_sigmoid(bias + sum(map(mul, w, row))) for row in rows]

    def scores(self, rows: list[list[float]], single: bool = False) -> list[float]:
        """Content probabilities of the rows; ``single``: a page without a
        site model, which the ``single`` trees also score when there are any."""
        if self.kind == "trees":
            scores = [_sigmoid(z) for z in self.trees.raw(rows)]
            if single and self.single is not None:
                scores = self._blend(scores, [_sigmoid(z) for z in self.single.raw(rows)])
            return scores
        return self._linear(rows)

    def scores_table(self, flat: array, single: bool = False) -> list[float]:
        """``scores`` of rows given as one flat array (``_block_table``)."""
        if self.kind == "trees" and _speedups is not None:
            scores = self.trees.raw_table(flat, probabilities=True)
            if single and self.single is not None:
                scores = self._blend(scores, self.single.raw_table(flat, probabilities=True))
            return scores
        w = FEATURE_COUNT
        return self.scores([flat[i:i + w].tolist() for i in range(0, len(flat), w)], single)

    def stage2_scores(self, rows: list[list[float]]) -> list[float]:
        """Stage 2's content probabilities of ``stage2_rows``."""
        assert self.stage2 is not None
        return [_sigmoid(z) for z in self.stage2.raw(rows)] if rows else []

    def stage2_table_scores(self, flat: array) -> list[float]:
        """``stage2_scores`` of rows given as one flat array
        (``_speedups.stage2_table``)."""
        assert self.stage2 is not None
        return self.stage2.raw_table(flat, probabilities=True)

    def _blend(self, shared: list[float], single: list[float]) -> list[float]:
        """The shared trees' probabilities blended with the single-page
        trees': ``weight`` of the second."""
        w = self.single_weight
        return [(1.0 - w) * s + w * q for s, q in zip(shared, single)]

    def _linear(self, rows: list[list[float]]) -> list[float]:
        first = self._score(self.first, rows)
        return self._score(self.second, second_pass(rows, first))


def _sigmoid(z: float) -> float:
    if z > 30.0:
        z = 30.0
    elif z < -30.0:
        z = -30.0
    return 1 / (1 + math.exp(-z))


class _Trees:
    """A tree ensemble in flat arrays: node i tests ``row[feature[i]] <=
    threshold[i]`` and goes to ``left[i]`` or ``right[i]``; leaves have
    ``left[i] == -1`` and add ``value[i]``. ``roots`` are the trees' first
    nodes; the raw score is ``base`` plus one leaf value per tree."""

    def __init__(self, data: dict, width: int = FEATURE_COUNT) -> None:
        self.width = width
        self.base = float(data["base"])
        self.feature = array("i", data["feature"])
        self.threshold = array("d", data["threshold"])
        self.left = array("i", data["left"])
        self.right = array("i", data["right"])
        self.value = array("d", data["value"])
        self.roots = array("i", data["roots"])
        # The compiled walk trusts these indexes: check them once here.
        n = len(self.value)
        if not (len(self.feature) == len(self.threshold) == len(self.left) == len(self.right) == n
                and all(0 <= f < width for f in self.feature)
                and all(0 <= r < n for r in self.roots)
                and all(-1 <= c < n for c in self.left) and all(-1 <= c < n for c in self.right)
                and all((a < 0) == (b < 0) for a, b in zip(self.left, self.right))):
            raise ValueError("content model: inconsistent tree arrays")

    def raw(self, rows: list[list[float]]) -> list[float]:
        if _speedups is not None:
            return _speedups.score_trees(rows, self.feature, self.threshold, self.left, self.right,
                                         self.value, self.roots, self.base)
        return self.raw_py(rows)

    def raw_table(self, flat: array, probabilities: bool = False) -> list[float]:
        """``raw`` of rows given as one flat array (compiled walks only);
        ``probabilities``: through ``_sigmoid``, computed alike in C."""
        assert _speedups is not None  # the flat rows come from the compiled table
        return _speedups.score_table(flat, self.width, self.feature, self.threshold, self.left,
                                     self.right, self.value, self.roots, self.base, probabilities)

    def raw_py(self, rows: list[list[float]]) -> list[float]:
        feature, threshold, left, right, value = self.feature, self.threshold, self.left, self.right, self.value
        out = []
        for row in rows:
            total = self.base
            for node in self.roots:
                while left[node] >= 0:
                    node = left[node] if row[feature[node]] <= threshold[node] else right[node]
                total += value[node]
            out.append(total)
        return out


_DEFAULT: ContentModel | None = None


def default_model() -> ContentModel:
    """The shipped model, read once. Callers that start work (the CLI, the
    pipeline) call it first so a broken install fails at once, loudly,
    instead of marking every page ``error``."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ContentModel.load()
    return _DEFAULT
