"""Write a diagnose round's measured figures into the records and the docs (maintainers; issue 13).

The figures come from the benchmarks' committed results, never typed by hand:

    python scripts/diagnose_round_docs.py record heldout51 heldout52   # right after their first corpus run
    python scripts/diagnose_round_docs.py corpus --seen 49 50           # docs/diagnose.md's table, README
    python scripts/diagnose_round_docs.py agreement                     # the Label agreement table

`record` appends each round's first measurement (benchmarks/results/diagnose_corpus.json) to
benchmarks/data/diagnose_first_measurements.tsv, which the corpus test reads as its floors; a round is
recorded once. `corpus` rewrites, in docs/diagnose.md, the held-out rows of the Test corpus table (counts now;
a new round's row from its first measurement; `--seen` rounds marked "seen since"), the all-rounds row, the
list of first measurements for rounds 5-N and the corpus counts, and README's ten newest rounds.
`agreement` rewrites the per-study, all, Ascend/other and confidence rows of the Label agreement table and the
count of logs studied (benchmarks/results/diagnose_agreement.json). The prose around them (each round's bullet,
each study's paragraph, what the misses were) stays the maintainer's to write.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "diagnose.md"
README = ROOT / "README.md"
FIRST = ROOT / "benchmarks" / "data" / "diagnose_first_measurements.tsv"
CORPUS = ROOT / "benchmarks" / "results" / "diagnose_corpus.json"
AGREEMENT = ROOT / "benchmarks" / "results" / "diagnose_agreement.json"
ASCEND = ("npu_", "hccl_")   # a held-out file name's backend prefix for Ascend logs (docs/diagnose_labels.md)
_ORDINALS = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
             "nineteenth"]
_CARDINALS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
              "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}


def ordinal(n: int) -> str:
    """'thirty-fifth' for 35, 'one hundred and second' for 102, 'two hundredth' for 200 (1-999)."""
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        return f"{_CARDINALS[hundreds]} hundredth" if not rest else f"{_CARDINALS[hundreds]} hundred and {ordinal(rest)}"
    tens, ones = divmod(n, 10)
    if n < 20:
        return _ORDINALS[n]
    return f"{_TENS[tens][:-1]}ieth" if not ones else f"{_TENS[tens]}-{_ORDINALS[ones]}"


def _words(n: int) -> str:
    """'thirty-five' for 35, 'one hundred and two' for 102, 'two hundred' for 200 (0-999)."""
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        return f"{_CARDINALS[hundreds]} hundred" if not rest else f"{_CARDINALS[hundreds]} hundred and {_words(rest)}"
    tens, ones = divmod(n, 10)
    if n < 20:
        return _CARDINALS[n]
    return _TENS[tens] if not ones else f"{_TENS[tens]}-{_CARDINALS[ones]}"


def pct(right: int, logs: int) -> str:
    """The docs' percent: one decimal, '100 %' for all."""
    return "100 %" if right == logs else f"{100 * right / logs:.1f} %"


def round_no(name: str) -> int:
    return 1 if name == "heldout" else int(name.removeprefix("heldout"))


def first_measurements() -> dict[str, dict[str, str]]:
    lines = FIRST.read_text().splitlines()
    return {row["set"]: row for row in (dict(zip(lines[0].split("\t"), ln.split("\t"))) for ln in lines[1:] if ln)}


def first_total(first: dict[str, dict[str, str]]) -> tuple[int, int]:
    """(right, logs) over every round at its first measurement."""
    return sum(int(r["right"]) for r in first.values()), sum(int(r["logs"]) for r in first.values())


def ascend(name: str, misses: list[dict] | None = None) -> tuple[int, int]:
    """(Ascend logs in the round, how many of them memplan reads right given its misses)."""
    files = [ln.split("\t")[0] for ln in (ROOT / "fixtures" / "logs" / f"{name}.tsv").read_text().splitlines()[1:]]
    asc = {f for f in files if f.startswith(ASCEND)}
    wrong = {m["file"] for m in misses or [] if m["file"] in asc}
    return len(asc), len(asc) - len(wrong)


def record(names: list[str]) -> None:
    """Append the rounds' first measurements from the corpus results; refuse a round already recorded."""
    corpus, first = json.loads(CORPUS.read_text()), first_measurements()
    with FIRST.open("a") as out:
        for name in names:
            if name in first:
                raise SystemExit(f"{name} is already recorded: a first measurement is taken once")
            r = corpus[name]
            numbers = "" if r["numbers_right"] == r["with_numbers"] else str(r["numbers_right"])
            out.write(f"{name}\t{r['logs']}\t{r['right']}\t{numbers}\n")
            print(f"{name}: first measured {r['right']}/{r['logs']} = {pct(r['right'], r['logs'])}, "
                  f"numbers {r['numbers_right']}/{r['with_numbers']}")


def _new_row_note(name: str, first: dict[str, str], corpus: dict) -> str:
    logs, right = int(first["logs"]), int(first["right"])
    n_asc, asc_right = ascend(name, corpus[name]["misses"])
    return f"first measured {right}/{logs} = {pct(right, logs)}; Ascend {f'{asc_right}/{n_asc}' if n_asc else 'none'}"


def corpus_table(doc: str, corpus: dict, seen: set[int]) -> str:
    """The held-out rows of the Test corpus table, the all row and the first-measurement list."""
    row = re.compile(r"^\| held-out round (\d+) \((.*?)\) \| \d+ / \d+ \| [\d.]+ % \|$", re.M)
    present = set()

    def counts(m: re.Match) -> str:
        n, note = int(m[1]), m[2]
        present.add(n)
        r = corpus["heldout" if n == 1 else f"heldout{n}"]
        if n in seen and "seen since" not in note:
            note += "; seen since"
        return f"| held-out round {n} ({note}) | {r['right']} / {r['logs']} | {pct(r['right'], r['logs'])} |"

    doc = row.sub(counts, doc)
    first = first_measurements()
    new = [name for name in first if round_no(name) not in present]
    added = "".join(f"| held-out round {round_no(n)} ({_new_row_note(n, first[n], corpus)}) | {corpus[n]['right']} / "
                    f"{corpus[n]['logs']} | {pct(corpus[n]['right'], corpus[n]['logs'])} |\n" for n in new)
    a_right, a_logs = first_total(first)
    al = corpus["heldout_all"]
    all_row = (f"| held-out, all (first measured {a_right}/{a_logs} = {pct(a_right, a_logs)}) | {al['right']} / "
               f"{al['logs']} | {pct(al['right'], al['logs'])} |")
    doc = re.sub(r"^\| held-out, all \(.*$", lambda _: added + all_row, doc, count=1, flags=re.M)
    later = sorted((round_no(n), pct(int(r["right"]), int(r["logs"]))) for n, r in first.items() if round_no(n) >= 5)
    listed = ", ".join(p for _, p in later)
    doc, k = re.subn(r"(each round's first measurement: )[^*]*?( for rounds 5–)\d+",
                     lambda m: f"{m[1]}{listed}{m[2]}{later[-1][0]}", doc, count=1)
    assert k == 1, "the first-measurement list was not found"
    held, dev = al["logs"], corpus["dev"]["logs"]
    doc, k = re.subn(r"holds \d+ real log excerpts \(\d+ dev, \d+ held-out\)",
                     f"holds {held + dev} real log excerpts ({dev} dev, {held} held-out)", doc, count=1)
    assert k == 1, "the corpus count was not found"
    return doc


def readme_rounds(readme: str) -> str:
    """README's ten newest rounds at their first measurements, and all rounds."""
    first = first_measurements()
    names = sorted(first, key=round_no)
    items = []
    for name in names[-10:]:
        logs, right = int(first[name]["logs"]), int(first[name]["right"])
        n_asc = ascend(name)[0]
        items.append(f"{pct(right, logs)} ({logs} {'log' if logs == 1 else 'logs'}, {f'{n_asc} Ascend' if n_asc else 'none Ascend'})")
    a_right, a_logs = first_total(first)
    text = f"{', '.join(items)}; all {len(names)} rounds {a_right}/{a_logs} = {pct(a_right, a_logs)};"
    readme, k = re.subn(r"(the ten newest rounds\n).*?; all \S+ rounds \d+/\d+ = [\d.]+ %;",
                        lambda m: m[1] + text, readme, count=1, flags=re.S)
    assert k == 1, "README's ten newest rounds were not found"
    return readme


def _fig(d: dict) -> str:
    return f"{d['right']} ({pct(d['right'], d['logs'])})"


def _cells(s: dict) -> str:
    w = s["memplan_where_agree"]
    return (f"{s['logs']} | {_fig(s['agree'])} | {s['kappa']:.2f} | {_fig(s['memplan_vs_label1'])} | "
            f"{_fig(s['memplan_vs_label2'])} | {w['right']} / {w['logs']} ({pct(w['right'], w['logs'])}) |")


def agreement_table(doc: str, agree: dict) -> str:
    """The Label agreement table's rows and the count of logs studied."""
    studies = list(agree["by_study"])
    lo, hi = round_no(agree["rounds"][0]), round_no(agree["rounds"][-1])
    lines = [f"| all, rounds {lo}-{hi} | {_cells(agree['all'])}"]
    for i, key in enumerate(studies, 1):
        lines.append(f"| {key} ({ordinal(i)} study) | {_cells(agree['by_study'][key])}")
    for key, label in (("ascend", "Ascend (NPU, HCCL), all"), ("other", "other backends, all")):
        s = agree["by_backend"][key]
        w = s["memplan_where_agree"]
        lines.append(f"| {label} | {s['logs']} | {_fig(s['agree'])} | {s['kappa']:.2f} | "
                     f"{s['memplan_vs_label1']['right']} | {s['memplan_vs_label2']['right']} | {w['right']} / {w['logs']} |")
    c = [agree["by_confidence"][k] for k in ("high", "medium", "low")]
    lines.append("| second label's confidence high / medium / low, all | "
                 + " | ".join([" / ".join(str(x["logs"]) for x in c), " / ".join(str(x["agree"]["right"]) for x in c),
                               " / ".join(f"{x['kappa']:.2f}" for x in c),
                               " / ".join(str(x["memplan_vs_label1"]["right"]) for x in c),
                               " / ".join(str(x["memplan_vs_label2"]["right"]) for x in c),
                               ", ".join(f"{x['memplan_where_agree']['right']}/{x['memplan_where_agree']['logs']}"
                                         for x in c)]) + " |")
    doc, k = re.subn(r"^\| all, rounds \d+-\d+ \|.*?\n(?=\n)", "\n".join(lines) + "\n", doc, count=1,
                     flags=re.M | re.S)
    assert k == 1, "the agreement table was not found"
    n_asc = agree["by_backend"]["ascend"]["logs"]
    doc, k = re.subn(r"held-out rounds \d+-\d+ \(\d+ logs, \d+ of them Ascend\) were labelled a second time, in [a-z][a-z -]*\n?"
                     r"studies", f"held-out rounds {lo}-{hi} ({agree['all']['logs']} logs, {n_asc} of them Ascend) were "
                     f"labelled a second time, in {_words(len(studies))}\nstudies", doc, count=1)
    assert k == 1, "the agreement intro was not found"
    return re.sub(r"then rounds 19 to \d+ one by one", f"then rounds 19 to {hi} one by one", doc, count=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("record").add_argument("rounds", nargs="+", help="set names, e.g. heldout51")
    sub.add_parser("corpus").add_argument("--seen", type=int, nargs="*", default=[],
                                          help="rounds whose misses were described to a dev batch since")
    sub.add_parser("agreement")
    args = ap.parse_args()
    if args.cmd == "record":
        return record(args.rounds)
    doc = DOC.read_text()
    if args.cmd == "corpus":
        DOC.write_text(corpus_table(doc, json.loads(CORPUS.read_text()), set(args.seen)))
        README.write_text(readme_rounds(README.read_text()))
    else:
        DOC.write_text(agreement_table(doc, json.loads(AGREEMENT.read_text())))


if __name__ == "__main__":
    main()
