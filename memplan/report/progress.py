"""Progress on stderr for long work (traces, plan searches, validation runs).

`progress(total, label)` is a context manager yielding a `Progress` with `update(n)`; it draws click's
progress bar on stderr, and is silent (a no-op) when `quiet` is set, when the command's output is JSON,
or when stderr is not a terminal -- so logs, pipes and CI stay clean. stdout is never touched.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

import click

__all__ = ["Progress", "progress", "track", "progress_enabled"]

T = TypeVar("T")


class Progress:
    """What the `with` block gets; a silent one ignores every call."""

    def __init__(self, bar=None) -> None:
        self._bar = bar
        self.count = 0

    @property
    def active(self) -> bool:
        return self._bar is not None

    def update(self, n: int = 1, label: str | None = None) -> None:
        """Advance by `n` steps (and optionally change the label shown)."""
        self.count += n
        if self._bar is not None:
            if label is not None:
                self._bar.label = label
            self._bar.update(n)


def progress_enabled(*, quiet: bool = False, fmt: str = "table", stream=None) -> bool:
    """Whether a bar would be drawn: not quiet, output not JSON, and `stream` (stderr) a terminal."""
    if quiet or fmt == "json":
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress(total: int | None, label: str = "", *, quiet: bool = False, fmt: str = "table",
             force: bool | None = None, stream=None) -> Iterator[Progress]:
    """A progress bar on stderr for `total` steps (None: unknown length, a spinner-like counter).

    `force=True`/`False` overrides the automatic choice (tests, or a `--progress` flag).
    """
    stream = sys.stderr if stream is None else stream
    on = progress_enabled(quiet=quiet, fmt=fmt, stream=stream) if force is None else force
    if not on:
        yield Progress()
        return
    with click.progressbar(length=total, label=label, file=stream, show_eta=total is not None,
                           show_pos=True, width=30) as bar:
        yield Progress(bar)


def track(items: Iterable[T], label: str = "", *, total: int | None = None, quiet: bool = False,
          fmt: str = "table", force: bool | None = None) -> Iterator[T]:
    """Iterate over `items`, advancing a progress bar (same silence rules as `progress`)."""
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with progress(total, label, quiet=quiet, fmt=fmt, force=force) as p:
        for item in items:
            yield item
            p.update(1)
