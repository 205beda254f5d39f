"""The corpus benchmark finds every held-out round by its file name (a new heldoutN.tsv needs no code change)."""
from __future__ import annotations

from corpus_helpers import corpus_benchmark as _bench


def test_held_out_rounds_are_found_in_round_order(tmp_path):
    for name in ("index.tsv", "heldout.tsv", "heldout10.tsv", "heldout2.tsv", "heldout5.tsv", "heldout5.tsv.bak",
                 "notheldout3.tsv"):
        (tmp_path / name).write_text("file\tsource\tcategory\tnumbers\tnote\n", encoding="utf-8")
    assert _bench().held_out_sets(str(tmp_path)) == ("heldout", "heldout2", "heldout5", "heldout10")


def test_every_present_round_is_a_set_and_in_the_aggregate():
    b = _bench()
    assert b.HELD_OUT[:4] == ("heldout", "heldout2", "heldout3", "heldout4")
    assert set(b.SETS) == {"dev", *b.HELD_OUT}
    assert all(b.SETS[n] == (f"{n}.tsv", n) for n in b.HELD_OUT)
