"""What a generated operation hands the transport (a :class:`Call`) and gets back (a :class:`Reply`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

T = TypeVar("T")

__all__ = ["Answered", "Call", "Reply", "segment"]


@dataclass(frozen=True)
class Call:
    """One request: ``ok`` are the statuses the operation answers with a body of its own (others are
    problems); ``query`` and ``headers`` values of None are left out."""

    method: str
    path: str
    ok: tuple[int, ...]
    query: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str | None] = field(default_factory=dict)
    body: Any = None
    #: Seconds to wait for this answer, beyond the client's own (a long-poll's length, say).
    request_timeout: float | None = None


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any


@dataclass(frozen=True)
class Answered(Generic[T]):
    """The answer of an operation with several success statuses (201 created, 200 found again)."""

    status: int
    body: T


def segment(value: str) -> str:
    """A path segment: job and partition ids hold '/' and other reserved characters."""
    return quote(value, safe="")
