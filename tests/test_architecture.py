"""The layers of docs/architecture.md, enforced on the source: every `import` of a memplan module (at the
top of a module or inside a function) points down or sideways, never up; only the CLI and the package
`__init__` import the façade `memplan.api`; there is no import cycle; memplan modules are imported at the
top of a module unless the import is a deliberately lazy one (it loads torch / transformers, or it keeps
the CLI's `--help` instant); no function is longer than MAX_FUNCTION_LINES.
"""
from __future__ import annotations

import ast
import pathlib

import networkx as nx
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "memplan"

# bottom-up; a module may import modules of its own layer or below
LAYERS = [
    ("memplan", "memplan.errors", "memplan.units", "memplan.compat"),
    ("memplan.workload", "memplan.hf", "memplan.hfscan", "memplan.finetune", "memplan.configs"),
    ("memplan.step", "memplan.optim8bit"),
    ("memplan.trace", "memplan.alloc", "memplan.measure"),
    ("memplan.core",),
    ("memplan.plan", "memplan.validate", "memplan.diagnose", "memplan.distributed"),
    ("memplan.report",),
    ("memplan.api",),
    ("memplan.cli", "memplan.__main__"),
]
HEAVY = ("torch", "transformers", "torch_npu", "matplotlib")
MAX_FUNCTION_LINES = 80
LONG_FUNCTION_ALLOWED: set[str] = set()
LAZY_IMPORT_ALLOWED: set[str] = set()


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES.get(name) is not None and MODULES[name].name == "__init__.py"


def _resolve(name: str, node: ast.ImportFrom | ast.Import, alias: str | None) -> str:
    """`from memplan.x import y` is an import of memplan.x.y when y is a module, else of memplan.x."""
    if alias is not None and f"{name}.{alias}" in MODULES:
        return f"{name}.{alias}"
    return name


def imports(module: str) -> list[tuple[str, bool, int]]:
    """(imported module, at module top?, line) for every import in `module`, memplan or not."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(n) for n in tree.body}
    for n in tree.body:   # imports under a module-level `if` / `try` count as top-level too
        if isinstance(n, (ast.If, ast.Try)):
            top_level |= {id(c) for c in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top_level, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if _is_package(module) else module.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out += [(_resolve(name, node, a.name), id(node) in top_level, node.lineno) for a in node.names]
    return out


def layer_of(module: str) -> int:
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return rank


def _memplan_imports(module):
    return [(t, top, line) for t, top, line in imports(module) if t == "memplan" or t.startswith("memplan.")]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    mine = layer_of(module)
    up = [f"line {line}: {t} (layer {layer_of(t)} > {mine})" for t, _top, line in _memplan_imports(module)
          if layer_of(t) > mine]
    assert not up, f"{module} imports a higher layer: " + "; ".join(up)


def test_only_the_cli_imports_the_api():
    bad = [f"{m}:{line}" for m in MODULES for t, _top, line in _memplan_imports(m)
           if t == "memplan.api" and not (m == "memplan" or m.startswith("memplan.cli"))]
    assert not bad, f"memplan.api is the façade for the CLI only; imported by {bad}"


def _private_names(module: str):
    """(imported module, name) pairs of `from x import _name` in `module`."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memplan"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    yield _resolve(node.module, node, a.name), a.name


def _package(module: str) -> str:
    """memplan.<sub> for a module of a subpackage, the module itself for a top-level one."""
    return ".".join(module.split(".")[:2])


def test_no_private_imports_across_packages():
    """`_private` modules and names stay inside their package (memplan.report may not import
    memplan.diagnose._render, memplan.distributed may not import memplan.trace.tracer._TraceHooks)."""
    bad = []
    for m in MODULES:
        for t, _top, line in _memplan_imports(m):
            private = [p for p in t.split(".") if p.startswith("_") and not p.startswith("__")]
            if private and _package(t) != _package(m):
                bad.append(f"{m}:{line} imports {t}")
        for t, name in _private_names(m):
            if t in MODULES and _package(t) != _package(m):
                bad.append(f"{m} imports {name} from {t}")
    assert not bad, bad


def test_no_import_cycles():
    g = nx.DiGraph()
    for m in MODULES:
        for t, _top, _line in _memplan_imports(m):
            if t in MODULES and t != m:
                g.add_edge(m, t)
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles: {cycles[:5]}"


def _loads_heavy(module: str, seen=None) -> bool:
    """Whether importing `module` imports torch / transformers (through top-level imports)."""
    seen = set() if seen is None else seen
    if module in seen:
        return False
    seen.add(module)
    for t, top, _line in imports(module):
        if not top:
            continue
        if t.split(".")[0] in HEAVY:
            return True
        if t in MODULES and _loads_heavy(t, seen):
            return True
    return False


def test_lazy_imports_are_deliberate():
    """A function-level import of a memplan module is there to keep torch (or transformers) from loading
    with the importer, or to keep the CLI instant; anything else goes at the top of the module."""
    bad = []
    for m in MODULES:
        if m.startswith("memplan.cli") or m == "memplan" or m in LAZY_IMPORT_ALLOWED:
            continue
        for t, top, line in _memplan_imports(m):
            if not top and t in MODULES and not _loads_heavy(t):
                bad.append(f"{m}:{line} imports {t}")
    assert not bad, "move these imports to the top of their module: " + "; ".join(bad)


def test_functions_are_short():
    long = []
    for m, path in MODULES.items():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES and f"{rel}:{node.name}" not in LONG_FUNCTION_ALLOWED:
                    long.append(f"{rel}:{node.name} ({n} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
