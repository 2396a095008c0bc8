"""Name -> object registries (task types, tasks, corpus kinds): a name registered twice is an error."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def register(registry: dict[str, T], name: str, value: T, what: str) -> T:
    """Put ``value`` under ``name``; ``what`` names the kind of entry in the error for a name already taken."""
    if name in registry:
        raise ValueError(f"{what} {name!r} is already registered")
    registry[name] = value
    return value


def registrar(registry: dict[str, T], what: str) -> Callable[[str], Callable[[T], T]]:
    """A decorator factory: ``@registrar(REG, "kind")("name")`` registers the decorated object under ``name``."""
    def by_name(name: str) -> Callable[[T], T]:
        return lambda value: register(registry, name, value, what)

    return by_name
