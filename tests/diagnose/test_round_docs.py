"""The held-out figures in docs/diagnose.md and README are the committed benchmark results
(scripts/diagnose_round_docs.py writes them; this checks nobody typed one by hand since)."""
from __future__ import annotations

import json

from corpus_helpers import load_script


def _script():
    return load_script("scripts/diagnose_round_docs.py")


def test_words_and_percentages():
    s = _script()
    assert [s.ordinal(n) for n in (1, 12, 20, 35, 41)] == ["first", "twelfth", "twentieth", "thirty-fifth",
                                                           "forty-first"]
    assert [s._words(n) for n in (7, 35, 40)] == ["seven", "thirty-five", "forty"]
    assert [s.ordinal(n) for n in (100, 101, 120)] == ["one hundredth", "one hundred and first",
                                                        "one hundred and twentieth"]
    assert [s._words(n) for n in (100, 109)] == ["one hundred", "one hundred and nine"]
    # past 199 (the two hundredth study came in session 19; it first printed "one hundred and one hundredth")
    assert [s.ordinal(n) for n in (199, 200, 201, 218)] == ["one hundred and ninety-ninth", "two hundredth",
                                                             "two hundred and first", "two hundred and eighteenth"]
    assert [s._words(n) for n in (200, 218)] == ["two hundred", "two hundred and eighteen"]
    assert (s.pct(9, 15), s.pct(11, 11), s.pct(1, 3)) == ("60.0 %", "100 %", "33.3 %")


def test_docs_show_the_committed_corpus_and_agreement_results():
    s = _script()
    doc, readme = s.DOC.read_text(), s.README.read_text()
    corpus, agree = json.loads(s.CORPUS.read_text()), json.loads(s.AGREEMENT.read_text())
    assert s.corpus_table(doc, corpus, set()) == doc
    assert s.agreement_table(doc, agree) == doc
    assert s.readme_rounds(readme) == readme
