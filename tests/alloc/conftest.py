import pytest

MiB = 1024 * 1024
KiB = 1024


class Ev:
    """Build (is_alloc, sid, nbytes) event lists: `e.a("x", 3 * MiB)`, `e.f("x")`."""

    def __init__(self):
        self.events = []
        self._ids = {}
        self._sizes = {}

    def a(self, name, nbytes):
        sid = len(self._ids)
        self._ids[name] = sid
        self._sizes[name] = nbytes
        self.events.append((True, sid, nbytes))
        return self

    def f(self, name):
        self.events.append((False, self._ids[name], self._sizes[name]))
        return self


@pytest.fixture
def ev():
    return Ev()
