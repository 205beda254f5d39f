"""transformers' models folder scanned once per process, not twice: the same lazy-import structure, about
0.27 s of CPU less in every process that loads a Hugging Face config.

`import transformers` builds its lazy-import structure by scanning `transformers/models` (every model's
files read for their `__all__`: `create_import_structure_from_path`, cached by `functools.lru_cache`), and
importing `transformers.models` -- which every config and model class needs -- scans that folder again:
it asks for the structure of the folder's `__init__.py`, another cache key, and the cache (128 entries)
has cycled through the first scan's ~550 sub-folders since. `install()`, called between the two, hands
the scanner the folder of a file it is given, as the scanner itself would scan it, so the second scan
is the first one's cache entry: the same structure (tests/test_hfscan.py compares it with the one the
unchanged scanner builds), read once. Installed only where transformers' scanner is the one this was
written against (`supported`); elsewhere the scan runs as transformers wrote it.
"""
from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path


def _scanner():
    """transformers' import-structure module and its own scanner (None, None where it has none)."""
    iu = sys.modules.get("transformers.utils.import_utils")
    scan = getattr(iu, "create_import_structure_from_path", None)
    if getattr(scan, "memplan_folder_scan", False):
        scan = scan.__wrapped__
    return (iu, scan) if scan is not None else (None, None)


def supported() -> bool:
    """transformers' scanner is a cached function of one path that scans the folder of a file it is given,
    and `define_import_structure` calls it by its module-level name."""
    iu, scan = _scanner()
    define = getattr(iu, "define_import_structure", None)
    inner = getattr(scan, "__wrapped__", None)
    if inner is None or not hasattr(scan, "cache_info") or define is None:
        return False
    names = inner.__code__.co_names
    return (list(inspect.signature(inner).parameters) == ["module_path"]
            and {"isfile", "dirname"} <= set(names)
            and "create_import_structure_from_path" in getattr(define, "__wrapped__", define).__code__.co_names)


def install() -> bool:
    """After `import transformers`, before `transformers.models` is imported: the scan of a file becomes
    the cached scan of its folder. Says whether it is in place (again: True, without a second wrapper)."""
    iu, scan = _scanner()
    if getattr(getattr(iu, "create_import_structure_from_path", None), "memplan_folder_scan", False):
        return True
    if "transformers.models" in sys.modules or not supported():
        return False

    def folder_scan(module_path):
        if os.path.isfile(module_path):   # as the scanner does first: a file stands for its folder
            module_path = os.path.dirname(module_path)
        return scan(Path(module_path))    # `import transformers` asked for Path(.../models)

    folder_scan.__wrapped__ = scan
    folder_scan.cache_info, folder_scan.cache_clear = scan.cache_info, scan.cache_clear
    folder_scan.memplan_folder_scan = True
    iu.create_import_structure_from_path = folder_scan
    return True
