"""memplan.hfscan: transformers' models folder scanned once (the second scan is the first one's cache
entry), and transformers' lazy-import structure exactly what its unchanged scanner builds."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]

# a fresh process (the test process may have imported transformers.models already): the scanner's cache
# misses after `import transformers` and after `transformers.models`, and the lazy modules' structure
_PROBE = """
import json, sys
import transformers
from memplan import hfscan
iu = sys.modules["transformers.utils.import_utils"]
first = iu.create_import_structure_from_path.cache_info().misses
installed = hfscan.install() if {install} else False
import transformers.models
models, top = sys.modules["transformers.models"], sys.modules["transformers"]
print(json.dumps({{"installed": installed, "supported": hfscan.supported(), "first": first,
                  "second": iu.create_import_structure_from_path.cache_info().misses - first,
                  "again": hfscan.install(),
                  "models": [sorted(models._class_to_module.items()), sorted(models._modules)],
                  "top": [sorted(top._class_to_module.items()), sorted(top._modules)]}}))
"""


def _probe(install: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE.format(install=install)], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    return json.loads(out)


def test_the_models_folder_is_scanned_once_with_the_same_structure():
    plain, once = _probe(False), _probe(True)
    if not once["supported"]:
        pytest.skip("this transformers has another import-structure scanner: hfscan stays out of it")
    assert once["installed"] and once["again"]
    assert plain["second"] >= plain["first"] > 100   # unchanged: the whole folder again, hundreds of sub-folders
    assert once["second"] <= 5                       # installed: the first scan's entry (a few small folders)
    assert once["models"] == plain["models"] and once["top"] == plain["top"]


def test_not_installed_after_transformers_models_was_imported():
    code = ("import transformers, transformers.models, sys; from memplan import hfscan; "
            "print(hfscan.install(), hasattr(sys.modules['transformers.utils.import_utils']"
            ".create_import_structure_from_path, 'memplan_folder_scan'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.split() == ["False", "False"]


def test_memplan_installs_it_when_it_imports_transformers():
    code = ("import sys; from memplan import hf, hfscan; hf._transformers(); "
            "print(hfscan.supported(), getattr(sys.modules['transformers.utils.import_utils']"
            ".create_import_structure_from_path, 'memplan_folder_scan', False))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    supported, installed = out.split()
    assert installed == supported
