"""The issue-13 corpus splits, each run once before any rule was written for its logs (kept for the record).

Round 1: 69 new real excerpts labelled in a staging TSV (file, source, category, numbers, note); sorted by
file name, shuffled with random.Random(13), the first 34 became the held-out set (fixtures/logs/heldout.tsv,
excerpts under fixtures/logs/heldout/), the other 35 were appended to the dev index (fixtures/logs/index.tsv).

Round 2 (after round 1 had been measured once): 36 further excerpts, random.Random(2026), the first 20 became
fixtures/logs/heldout2.tsv (excerpts under fixtures/logs/heldout2/), the other 16 were appended to the dev
index. Rules written after round 1 come from the dev logs only.

Round 3 (after round 2 had been measured once): 20 further excerpts, random.Random(2027), the first 10 became
fixtures/logs/heldout3.tsv (excerpts under fixtures/logs/heldout3/), the other 10 were appended to the dev index.

Round 4 (after round 3 had been measured once): 12 further excerpts, random.Random(2028), the first 6 became
fixtures/logs/heldout4.tsv (excerpts under fixtures/logs/heldout4/), the other 6 were appended to the dev index.

    python benchmarks/diagnose_corpus_split.py staging.tsv --seed 13 --held-out 34 --name heldout
    python benchmarks/diagnose_corpus_split.py staging.tsv --seed 2026 --held-out 20 --name heldout2
    python benchmarks/diagnose_corpus_split.py staging.tsv --seed 2027 --held-out 10 --name heldout3
    python benchmarks/diagnose_corpus_split.py staging.tsv --seed 2028 --held-out 6 --name heldout4
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import shutil

HEADER = ["file", "source", "category", "numbers", "note"]


def split(rows: list[list[str]], seed: int, held_out: int) -> tuple[list[list[str]], list[list[str]]]:
    rows = sorted(rows, key=lambda r: r[0])
    random.Random(seed).shuffle(rows)
    return rows[:held_out], rows[held_out:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("staging")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--held-out", type=int, required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--root", default="fixtures/logs")
    a = ap.parse_args()
    with open(a.staging, encoding="utf-8") as f:
        held, dev = split(list(csv.reader(f, delimiter="\t")), a.seed, a.held_out)
    os.makedirs(f"{a.root}/{a.name}", exist_ok=True)
    with open(f"{a.root}/{a.name}.tsv", "w", encoding="utf-8") as f:
        f.write("\t".join(HEADER) + "\n")
        for r in sorted(held, key=lambda r: r[0]):
            shutil.move(f"{a.root}/{r[0]}", f"{a.root}/{a.name}/{r[0]}")
            f.write("\t".join(r) + "\n")
    with open(f"{a.root}/index.tsv", "a", encoding="utf-8") as f:
        for r in sorted(dev, key=lambda r: r[0]):
            f.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
