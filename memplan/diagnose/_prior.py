"""The statistical fallback of `memplan diagnose`: which category's logs a log's error lines resemble.

A multinomial naive Bayes over the words of error-looking lines, trained only from the dev corpus
(`fixtures/logs/index.tsv`, by `scripts/train_diagnose_prior.py`) and stored as data
(`data/prior.json`: per category, how often each word occurred). It is a last resort: `_diagnose` asks it
only when the rules answer `unknown` for a log with an error-looking line, and takes its answer only when
the log-odds margin between the best and the second category reaches the threshold stored with the model
(chosen by cross-validation, `benchmarks/diagnose_prior_cv.py`).

Tokens: lower-case words of lines the scanner found (error-looking lines, lines a rule or code matched;
warnings, traceback frames and the `Traceback (most recent call last)` header left out); identifiers split on anything that is not a letter or digit; pure
numbers dropped, digits inside a word bucketed (`e39999` -> `e00000`); Chinese text as character bigrams.
The last exception line of a traceback (`RuntimeError: ...`) counts `_EXC_WEIGHT` times. Work is bounded:
at most `MAX_LINES` distinct lines and `MAX_TOKENS_PER_LINE` tokens each, whatever the log's size.

Known limitations: it knows only the words of the dev logs (about 400); it cannot tell fragmentation from capacity
(that is arithmetic, done by the rules when the numbers are there); a log in a language or stack unlike the
dev corpus gets a small margin and stays `unknown`.
"""
from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Iterable, Mapping

from memplan.diagnose._advice import choose_advice
from memplan.diagnose._parse import READING_KINDS, scan
from memplan.diagnose._reader import ReadStats, iter_binary, open_source
from memplan.diagnose._types import Category, Incident

MAX_LINES = 256
MAX_CONFIDENCE = 0.35
MAX_TOKENS_PER_LINE = 64
_EXC_WEIGHT = 3
# dev batch 91: the kinds of three rows that add evidence on lines that gave the prior no words before them
# (bitsandbytes' GPU report and CPU-library markers, torch elastic's exit-status report): what they argue is the
# rules' (a context, a warning, an `unknown` incident that keeps the fallback out), not wording to learn; dev batch 104:
# the scanner's from_pretrained context (`pretrained-call`, read on lines that had no trigger word before)
# dev batch 109: the context rows on an installed library's frame (scikit-learn's own file, a package's _load_library)
# and scikit-learn's unpickling notice: lines the scanner passed over before, whose reading is the rules'
# dev batch 111: TensorFlow's registered-kernel list lines and its registered-device list (rows tf-kernel-list,
# tf-registered-devices-no-gpu): lines the scanner passed over before, whose reading is the rules'
# dev batch 113: the scanner's reading of a SyntaxError after a newer-syntax context (`syntax-newer`; the same line's
# error-line evidence keeps its words) and the context rows on its location / source lines (kind library-frame)
# dev batch 135: the scanner's reading of findContours' unpacking error after its three-target source line (`api-newer`;
# the line's own weak ValueError phrase keeps its words)
# dev batch 140: the scanner's reading of a ZeroDivisionError under a frame of the user's own file (`zerodiv-own`; the
# line's own error-line evidence keeps its words); dev batch 142: its reading of a missing file at a path the user's own
# command passed (`path-from-command`; the line's own evidence keeps its words)
# dev batch 144: the scanner's reading of a broken pipe under a write to a child process's stdin (`child-pipe-closed`;
# the line's own evidence keeps its words); dev batch 148: its reading of an error on None under a source line calling
# cv2.imread (`imread-none`; the line's own evidence keeps its words). The scanner's readings come from
# _parse.READING_KINDS, so a new one is kept out of the words where it is defined. Dev batch 151: load_state_dict's
# key-list lines read on their own (row state-dict-key-lists): lines that gave the prior no words before, whose reading
# is the rules'.
_SKIP_KINDS = {"frame", "op", "numbers", "warning", "bnb-gpus", "bnb-cpu-lib", "elastic-exit", "pretrained-call",
               "library-frame", "unpickle-notice", "tf-kernel-list", "tf-devices", "tcnn-cutlass",
               "state-dict-keys"} | READING_KINDS
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]+")
_DIGIT = re.compile(r"\d")
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\)")
_EXC_LINE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault)\b:")
_STOP = frozenset("a an the to of in on at is are was be by for and or with as it this that from not no "
                  "please if you your can".split())
TOKENIZER_VERSION = 1


def tokens(line: str) -> list[str]:
    """Tokens of one line: lower-case words, digits bucketed, numbers and stop words dropped, CJK bigrams."""
    out: list[str] = []
    for w in _WORD.findall(line.lower()):
        if "\u4e00" <= w[0] <= "\u9fff":
            out.extend([w] if len(w) == 1 else [w[i:i + 2] for i in range(len(w) - 1)])
        elif w.isdigit() or len(w) < 2 or w in _STOP:
            continue
        else:
            out.append(_DIGIT.sub("0", w))
        if len(out) >= MAX_TOKENS_PER_LINE:
            break
    return out[:MAX_TOKENS_PER_LINE]


class PriorText:
    """Collects the token counts of one log from the scanner's evidence, in bounded memory."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._texts: set[str] = set()
        self._last_exc: list[str] = []

    def add(self, ev: Any) -> None:
        """Feed one `Evidence` (`_parse.scan`); each distinct line text counts once."""
        if ev.kind in _SKIP_KINDS or len(self._texts) >= MAX_LINES:
            return
        text = ev.text.strip()[:500]
        if text in self._texts or _TRACEBACK_HEAD.search(text):
            return
        self._texts.add(text)
        toks = tokens(text)
        self.counts.update(toks)
        if _EXC_LINE.search(text):
            self._last_exc = toks

    def features(self) -> Counter[str]:
        """The token counts, the last exception line weighted `_EXC_WEIGHT` times."""
        out = Counter(self.counts)
        for t in self._last_exc:
            out[t] += _EXC_WEIGHT - 1
        return out


def log_features(source: Any) -> Counter[str]:
    """The features of one log (a path or the text), read and scanned as `diagnose` does: the trainer's view."""
    _label, stream, close = open_source(source)
    collected = PriorText()
    try:
        for ev in scan(iter_binary(stream, ReadStats())):
            collected.add(ev)
    finally:
        if close:
            stream.close()
    return collected.features()


@dataclass(frozen=True)
class Guess:
    """The prior's answer: the category, its posterior probability, the log-odds margin over the runner-up
    divided by the square root of the number of known words, and the words that argued most for it against the
    runner-up."""

    category: str
    probability: float
    margin: float
    runner_up: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class Prior:
    """A trained model (`data/prior.json`)."""

    categories: tuple[str, ...]
    log_prior: tuple[float, ...]
    log_unseen: tuple[float, ...]
    log_word: Mapping[str, tuple[float, ...]]
    threshold: float

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Prior":
        cats = tuple(d["categories"])
        docs = [d["docs"][c] for c in cats]
        totals = [d["tokens"][c] for c in cats]
        alpha = d["alpha"]
        vocab = d["vocab"]
        denom = [t + alpha * len(vocab) for t in totals]
        log_word = {w: tuple(math.log((n + alpha) / z) for n, z in zip(counts, denom)) for w, counts in vocab.items()}
        n_docs = sum(docs)
        return cls(categories=cats, log_prior=tuple(math.log(n / n_docs) for n in docs),
                   log_unseen=tuple(math.log(alpha / z) for z in denom), log_word=log_word,
                   threshold=float(d.get("threshold", 0.0)))

    def guess(self, feats: Mapping[str, int], n_words: int = 5) -> Guess | None:
        """Score the features; None when no known word is among them."""
        known = {w: n for w, n in feats.items() if w in self.log_word}
        if not known or len(self.categories) < 2:
            return None
        scores = list(self.log_prior)
        for w, n in known.items():
            for i, lp in enumerate(self.log_word[w]):
                scores[i] += n * lp
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], self.categories[i]))
        best, second = order[0], order[1]
        top = scores[best]
        prob = 1.0 / sum(math.exp(s - top) for s in scores)
        contrib = sorted(((n * (self.log_word[w][best] - self.log_word[w][second]), w) for w, n in known.items()),
                         key=lambda x: (-x[0], x[1]))
        words = tuple(w for c, w in contrib[:n_words] if c > 0)
        # the log-odds grow with the number of words; per sqrt(words) they compare short and long logs
        margin = (top - scores[second]) / math.sqrt(sum(known.values()))
        return Guess(self.categories[best], prob, margin, self.categories[second], words)

    def decide(self, feats: Mapping[str, int]) -> Guess | None:
        """The guess when it names a failure (the dev logs labelled `unknown` are a class too) and its margin reaches
        the model's threshold, else None (the log stays `unknown`)."""
        g = self.guess(feats)
        return g if g is not None and g.category != "unknown" and g.margin >= self.threshold else None


def train(docs: Iterable[tuple[str, Mapping[str, int]]], *, alpha: float = 1.0, min_df: int = 1,
          threshold: float = 0.0) -> dict[str, Any]:
    """The model as plain data from (category, token counts) pairs: words seen in at least `min_df` logs."""
    docs = list(docs)
    df: Counter[str] = Counter()
    for _, feats in docs:
        df.update(set(feats))
    vocab_words = sorted(w for w, n in df.items() if n >= min_df)
    cats = sorted({c for c, _ in docs})
    index = {c: i for i, c in enumerate(cats)}
    vocab = {w: [0] * len(cats) for w in vocab_words}
    n_docs = [0] * len(cats)
    totals = [0] * len(cats)
    for c, feats in docs:
        i = index[c]
        n_docs[i] += 1
        for w, n in feats.items():
            if w in vocab:
                vocab[w][i] += n
                totals[i] += n
    return {"categories": cats, "alpha": alpha, "min_df": min_df, "threshold": threshold,
            "docs": dict(zip(cats, n_docs)), "tokens": dict(zip(cats, totals)), "vocab": vocab,
            "tokenizer_version": TOKENIZER_VERSION}


_NPU_WORDS = frozenset({"npu", "ascend", "cann", "hccl", "aclnn", "acl", "mindspore", "mindie"})
_CUDA_WORDS = frozenset({"cuda", "nvidia", "nccl", "cudnn", "cublas", "gpu"})


def backend_flags(feats: Mapping[str, int]) -> set[str]:
    """`npu` / `cuda` when the lines name that stack, so the guessed category's advice follows the backend."""
    return {flag for flag, words in (("npu", _NPU_WORDS), ("cuda", _CUDA_WORDS)) if words & set(feats)}


def guessed_incident(unknown: Incident, guess: Guess, threshold: float, flags: set[str]) -> Incident:
    """The `unknown` incident re-read as the prior's guess: low confidence (0.25 at the threshold, at most
    `MAX_CONFIDENCE`), the words quoted, the lines the rules could not read still quoted, advice of the guessed
    category first and the `unknown` advice after."""
    cat = Category(guess.category)
    words = ", ".join(f"\u201c{w}\u201d" for w in guess.words) or "none in particular"
    lead = (f"Guess from the wording, not a diagnosis: no known message or code matched, but the wording resembles "
            f"the {cat.value} logs memplan learned from (words: {words}; next closest: {guess.runner_up}). ")
    advice = choose_advice(cat, numbers=unknown.numbers, flags=flags, codes=unknown.codes, device=unknown.device)
    ids = {a.id for a in advice}
    advice += tuple(a for a in unknown.advice if a.id not in ids)
    note = (f"prior: {cat.value} (margin {guess.margin:.1f} over {guess.runner_up}, words: "
            f"{', '.join(guess.words) or '-'})")
    conf = min(MAX_CONFIDENCE, 0.2 + 0.05 * guess.margin / threshold) if threshold > 0 else 0.25
    return replace(unknown, category=cat, summary=lead + unknown.summary, advice=advice, confidence=round(conf, 2),
                   evidence=(*unknown.evidence, note), basis="prior")


@functools.lru_cache(maxsize=1)
def load_prior() -> Prior | None:
    """The committed model (`data/prior.json`), or None when it is missing."""
    try:
        text = resources.files("memplan.diagnose.data").joinpath("prior.json").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    d = json.loads(text)
    return Prior.from_dict(d["model"])


__all__ = ["Guess", "MAX_LINES", "guessed_incident", "Prior", "PriorText", "backend_flags", "load_prior", "log_features", "tokens", "train"]
