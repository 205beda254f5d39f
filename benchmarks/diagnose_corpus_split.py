"""The issue-13 corpus split, run once before any rule was written for it (kept for the record).

69 new real excerpts were labelled in a staging TSV (file, source, category, numbers, note); sorted by file name,
shuffled with random.Random(13), the first 34 became the held-out set (fixtures/logs/heldout.tsv, excerpts under
fixtures/logs/heldout/), the other 35 were appended to the dev index (fixtures/logs/index.tsv). Re-running needs
the staging file: `python benchmarks/diagnose_corpus_split.py staging.tsv`.
"""
from __future__ import annotations

import csv
import os
import random
import shutil
import sys

SEED = 13
HELD_OUT = 34
HEADER = ["file", "source", "category", "numbers", "note"]


def split(rows: list[list[str]]) -> tuple[list[list[str]], list[list[str]]]:
    rows = sorted(rows, key=lambda r: r[0])
    random.Random(SEED).shuffle(rows)
    return rows[:HELD_OUT], rows[HELD_OUT:]


def main(staging: str, root: str = "fixtures/logs") -> None:
    with open(staging, encoding="utf-8") as f:
        held, dev = split(list(csv.reader(f, delimiter="\t")))
    os.makedirs(f"{root}/heldout", exist_ok=True)
    with open(f"{root}/heldout.tsv", "w", encoding="utf-8") as f:
        f.write("\t".join(HEADER) + "\n")
        for r in sorted(held, key=lambda r: r[0]):
            shutil.move(f"{root}/{r[0]}", f"{root}/heldout/{r[0]}")
            f.write("\t".join(r) + "\n")
    with open(f"{root}/index.tsv", "a", encoding="utf-8") as f:
        for r in sorted(dev, key=lambda r: r[0]):
            f.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
