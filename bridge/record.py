"""Plain record classes for the modules a hook process loads (the rules, the shell parser, the
options table): equality, hashing and a repr from a list of field names, as `@dataclass` would give
them, without importing `dataclasses` (which brings `inspect`, `ast`, `dis` and `tokenize`, and
`exec`s each generated method: milliseconds of every hook's start-up).

A subclass names its fields in `_fields` (compared, and hashed when it is `Frozen`) and, when they
differ, the fields its repr shows in `_shown`; it writes its own `__init__`."""

from __future__ import annotations


class Record:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _shown: tuple[str, ...] | None = None  # the repr's fields when not `_fields`

    def _values(self) -> tuple[object, ...]:
        return tuple([getattr(self, name) for name in self._fields])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    # (no __hash__: a class that defines __eq__ alone is unhashable, as a plain dataclass is)

    def __repr__(self) -> str:
        names = self._fields if self._shown is None else self._shown
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"


class Frozen(Record):
    """A record that is not changed once made: hashable (by its fields)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())
