"""truegreen: tells the operator of a Kubernetes training environment the truth about it."""

import sys

__version__ = "0.1.0"


def _import_msgspec_without_typing_extensions() -> None:
    """Import msgspec while typing_extensions reads as not installed.

    msgspec asks typing_extensions for `get_type_hints` whenever it is installed, and
    typing_extensions imports `inspect`, `ast` and `dis`: about a tenth of doctor's start-up on a
    small namespace (bench/imports.py). truegreen needs Python 3.11, whose own `typing` has what
    msgspec falls back to (`get_type_hints(include_extras=True)`, `Required`, `NotRequired`), and
    names no typing_extensions type in a Struct. The mask is lifted at once: a later import of
    typing_extensions (a CEL selector's dependencies) finds it as usual.
    """
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


_import_msgspec_without_typing_extensions()
