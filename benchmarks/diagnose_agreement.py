"""How often two independent labellers agree on the held-out logs, and what that means for `memplan diagnose`.

Some held-out rounds were labelled twice: by their collector (the `category` column of `fixtures/logs/heldoutN.tsv`,
"label 1") and, blind to those labels, the rules and the tool, by a second person
(`benchmarks/data/diagnose_agreement/second_labels.tsv`, "label 2"; both by `docs/diagnose_labels.md`). The rounds
studied are the `set` values of that file (rounds 13-14 in a first study, 15-16 in a second); a round is added by
appending its second labels, nothing here names a round. This runs `memplan diagnose LOG --format json` on every
log through the CLI (the helpers of `benchmarks/diagnose_corpus.py`) and writes
benchmarks/results/diagnose_agreement.{json,md}: raw agreement between the labellers, Cohen's kappa, their confusion
table (in all and per round), and memplan's accuracy against label 1, against label 2, on the logs where both agree
and where they disagree, per round, per study, in all, by the second labeller's confidence and by Ascend vs other
backends. Kappa's chance term comes from each group's own marginals, so small groups give unsteady kappas.

    python benchmarks/diagnose_agreement.py
"""
from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import diagnose_corpus as corpus  # noqa: E402

SECOND = os.path.join(HERE, "data", "diagnose_agreement", "second_labels.tsv")
ASCEND_BACKENDS = ("npu", "hccl")
# Which rounds were second-labelled together, in one sitting and one commit (history, for the per-study rows); a
# round in the data that is not listed here is reported as a study of its own.
STUDIES = (("heldout13", "heldout14"), ("heldout15", "heldout16"), ("heldout17", "heldout18"))


def raw_agreement(first: list[str], second: list[str]) -> float | None:
    """Share of items both labellers put in the same category."""
    if len(first) != len(second):
        raise ValueError("the two label lists differ in length")
    return sum(a == b for a, b in zip(first, second)) / len(first) if first else None


def cohen_kappa(first: list[str], second: list[str]) -> float | None:
    """Cohen's kappa: (observed agreement - chance agreement) / (1 - chance agreement), chance from the marginals."""
    observed = raw_agreement(first, second)
    if observed is None:
        return None
    n = len(first)
    ca, cb = Counter(first), Counter(second)
    chance = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if chance == 1.0:
        return 1.0
    return (observed - chance) / (1.0 - chance)


def pair_confusion(first: list[str], second: list[str]) -> dict[str, dict[str, int]]:
    """Rows: label 1, columns: label 2."""
    table: dict[str, Counter] = {}
    for a, b in zip(first, second):
        table.setdefault(a, Counter())[b] += 1
    return {a: dict(sorted(c.items())) for a, c in sorted(table.items())}


def _rate(hits: int, n: int) -> dict:
    return {"right": hits, "logs": n, "pct": round(100 * hits / n, 1) if n else None}


def group_figures(items: list[dict]) -> dict:
    """Agreement and memplan's accuracy for one group of items (keys: label1, label2, answer)."""
    first = [i["label1"] for i in items]
    second = [i["label2"] for i in items]
    agree = [i for i in items if i["label1"] == i["label2"]]
    differ = [i for i in items if i["label1"] != i["label2"]]
    kappa = cohen_kappa(first, second)
    return {
        "logs": len(items),
        "agree": _rate(len(agree), len(items)),
        "kappa": round(kappa, 3) if kappa is not None else None,
        "memplan_vs_label1": _rate(sum(i["answer"] == i["label1"] for i in items), len(items)),
        "memplan_vs_label2": _rate(sum(i["answer"] == i["label2"] for i in items), len(items)),
        "memplan_vs_either": _rate(sum(i["answer"] in (i["label1"], i["label2"]) for i in items), len(items)),
        "memplan_where_agree": _rate(sum(i["answer"] == i["label1"] for i in agree), len(agree)),
        "memplan_where_differ_vs_label1": _rate(sum(i["answer"] == i["label1"] for i in differ), len(differ)),
        "memplan_where_differ_vs_label2": _rate(sum(i["answer"] == i["label2"] for i in differ), len(differ)),
        "memplan_where_differ_vs_either": _rate(sum(i["answer"] in (i["label1"], i["label2"]) for i in differ),
                                                len(differ)),
    }


def is_ascend(file: str) -> bool:
    return file.split("_", 1)[0] in ASCEND_BACKENDS


def round_order(name: str) -> int:
    """heldout -> 1, heldout13 -> 13 (the corpus's own round numbering)."""
    return int(name[len("heldout"):] or 1)


def rounds_in(items: list[dict]) -> list[str]:
    """The rounds present in the items, in round order (from the data, not a fixed list)."""
    return sorted({i["set"] for i in items}, key=round_order)


def studies_in(rounds: list[str]) -> list[tuple[str, ...]]:
    """The studies (rounds labelled together) among these rounds; an unlisted round is a study of its own."""
    out = [tuple(r for r in study if r in rounds) for study in STUDIES]
    out = [s for s in out if s]
    listed = {r for s in out for r in s}
    return out + [(r,) for r in rounds if r not in listed]


def study_name(study: tuple[str, ...]) -> str:
    nums = [round_order(r) for r in study]
    return f"rounds {nums[0]}-{nums[-1]}" if len(nums) > 1 else f"round {nums[0]}"


def _confusion_of(items: list[dict]) -> dict[str, dict[str, int]]:
    return pair_confusion([i["label1"] for i in items], [i["label2"] for i in items])


def build_report(items: list[dict]) -> dict:
    """Every figure of the study from the joined items (file, set, label1, label2, confidence, answer)."""
    rounds = rounds_in(items)
    report = {"rounds": rounds, "all": group_figures(items), "confusion_label1_x_label2": _confusion_of(items)}
    report["by_set"] = {s: group_figures([i for i in items if i["set"] == s]) for s in rounds}
    report["confusion_by_set"] = {s: _confusion_of([i for i in items if i["set"] == s]) for s in rounds}
    report["by_study"] = {study_name(st): group_figures([i for i in items if i["set"] in st])
                          for st in studies_in(rounds)}
    report["by_confidence"] = {c: group_figures([i for i in items if i["confidence"] == c])
                               for c in ("high", "medium", "low") if any(i["confidence"] == c for i in items)}
    report["by_backend"] = {"ascend": group_figures([i for i in items if is_ascend(i["file"])]),
                            "other": group_figures([i for i in items if not is_ascend(i["file"])])}
    keys = ("file", "set", "label1", "label2", "confidence", "answer", "reason", "note1")
    report["disagreements"] = [{k: i.get(k, "") for k in keys} for i in items if i["label1"] != i["label2"]]
    return report


def read_second(path: str = SECOND) -> dict[tuple[str, str], dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        return {(r["set"], r["file"]): r for r in csv.DictReader(f, delimiter="\t")}


def joined_items(runner) -> list[dict]:
    """Both labels and memplan's answer (through the CLI) for every log of every round in the second labels."""
    second = read_second()
    items = []
    for name in sorted({s for s, _ in second}, key=round_order):
        for row in corpus.rows(name):
            two = second.pop((name, row["file"]))
            result = corpus.run_one(runner, row)
            items.append({"file": row["file"], "set": name, "label1": row["category"], "label2": two["category"],
                          "confidence": two["confidence"], "reason": two["reason"], "note1": row.get("note", ""),
                          "answer": result["answer"] or "crash"})
    if second:
        raise ValueError(f"second labels for logs not in the rounds: {sorted(second)}")
    return items


def _figure_row(name: str, g: dict) -> str:
    def pct(r: dict) -> str:
        return f"{r['right']}/{r['logs']} ({r['pct']} %)" if r["logs"] else "-"
    return (f"| {name} | {g['logs']} | {pct(g['agree'])} | {g['kappa']} | {pct(g['memplan_vs_label1'])} | "
            f"{pct(g['memplan_vs_label2'])} | {pct(g['memplan_where_agree'])} | "
            f"{pct(g['memplan_where_differ_vs_label1'])} | {pct(g['memplan_where_differ_vs_label2'])} |")


def _confusion_table(table: dict[str, dict[str, int]]) -> list[str]:
    cats = sorted({c for row in table.values() for c in row} | set(table))
    lines = ["| label 1 \\ label 2 | " + " | ".join(cats) + " |", "|---|" + "---:|" * len(cats)]
    return lines + [f"| {a} | " + " | ".join(str(row.get(c, "")) for c in cats) + " |" for a, row in table.items()]


def markdown(report: dict) -> str:
    rounds = ", ".join(str(round_order(r)) for r in report["rounds"])
    lines = [f"# Label agreement on held-out rounds {rounds}", "",
             f"Command: `python benchmarks/diagnose_agreement.py` (runs `memplan diagnose LOG --format json` per log). "
             f"Commit `{report['commit']}`, {report['python']}. Label 1: the collector's `category` column; label 2: "
             "`benchmarks/data/diagnose_agreement/second_labels.tsv` (blind second labeller).", "",
             "| group | logs | labellers agree | kappa | memplan = label 1 | memplan = label 2 | memplan, where both "
             "agree | memplan = label 1, where they differ | memplan = label 2, where they differ |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    groups = [("all", report["all"])] + list(report["by_study"].items()) + list(report["by_set"].items()) + \
        [(f"confidence {k}", v) for k, v in report["by_confidence"].items()] + \
        [(f"backend {k}", v) for k, v in report["by_backend"].items()]
    lines += [_figure_row(name, g) for name, g in groups]
    lines += ["", "Confusion between labellers, all rounds (rows: label 1, columns: label 2):", ""]
    lines += _confusion_table(report["confusion_label1_x_label2"])
    for name, table in report["confusion_by_set"].items():
        lines += ["", f"Confusion between labellers, {name}:", ""] + _confusion_table(table)
    lines += ["", "Disagreements (label 2's reason; label 1's note):", ""]
    lines += [f"- `{d['set']}/{d['file']}`: label 1 {d['label1']}, label 2 {d['label2']} ({d['confidence']}), memplan "
              f"{d['answer']}. Label 2: {d['reason']}. Label 1: {d['note1']}" for d in report["disagreements"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    from click.testing import CliRunner

    start = time.perf_counter()
    report = {"benchmark": "diagnose_agreement", "python": platform.python_version(),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                       text=True).stdout.strip()}
    report.update(build_report(joined_items(CliRunner())))
    report["seconds"] = round(time.perf_counter() - start, 1)
    out = os.path.join(HERE, "results", "diagnose_agreement")
    with open(out + ".json", "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(out + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(report))
    a = report["all"]
    print(f"agree {a['agree']['right']}/{a['logs']} ({a['agree']['pct']} %), kappa {a['kappa']}; memplan vs label 1 "
          f"{a['memplan_vs_label1']['pct']} %, vs label 2 {a['memplan_vs_label2']['pct']} %, where both agree "
          f"{a['memplan_where_agree']['pct']} %")


if __name__ == "__main__":
    main()
