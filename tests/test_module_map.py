"""docs/architecture.md's module map is generated from the modules' docstrings and must be current."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("module_map", ROOT / "scripts" / "module_map.py")
module_map = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module_map)


def test_the_committed_map_is_current():
    doc = module_map.DOC.read_text(encoding="utf-8")
    assert module_map.render(doc, module_map.module_map()) == doc, "run: python scripts/module_map.py"


def test_every_module_is_listed_with_a_docstring():
    table = module_map.module_map()
    for path in (ROOT / "memplan").rglob("*.py"):
        assert f"| `{path.relative_to(ROOT).as_posix()}` |" in table
    assert "(no docstring)" not in table


def test_first_sentence_skips_ellipses_and_abbreviations():
    assert module_map.summary('"""`x LOG... [--y]`: do it. More."""') == "`x LOG... [--y]`: do it."
    assert module_map.summary('"""Read sizes, e.g. MiB. Then more."""') == "Read sizes, e.g. MiB."
    assert module_map.summary('"""One\nline.\n\nSecond paragraph."""') == "One line."
    assert module_map.summary("x = 1") == "(no docstring)"
