"""How a test file ends early (failure, skip, unsupported directive) and the
handling of error messages (`set ignore_error_messages` and friends)."""

from __future__ import annotations

# errors that fail a record even where an error is expected (DuckDB's defaults)
ALWAYS_FAIL_ERRORS = {"differs from original result!", "INTERNAL"}


class TestFailure(Exception):
    """A record failed: the file fails at `line` with `message` (and the SQL that ran)."""

    def __init__(self, line, message, sql=None):
        super().__init__(message)
        self.line = line
        self.message = message
        self.sql = sql


class TestSkip(Exception):
    """The file is skipped (`require` of a missing extension, `require-env` unset)."""


class TestUnsupported(Exception):
    """The file uses a directive this runner does not implement."""

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


def error_text(e) -> str:
    """The message of an exception as reported: DuckDB's own text, else `Type: text`."""
    import duckdb
    if isinstance(e, duckdb.Error):
        return str(e)
    return f"{type(e).__name__}: {e}"


def truncate(text, limit=400) -> str:
    """`text` cut to `limit` characters (with `...` when cut)."""
    text = text if isinstance(text, str) else str(text)
    return text if len(text) <= limit else text[:limit] + "..."


class ErrorMessagePolicy:
    """Which error messages skip the rest of a file (the config's skip_error_messages,
    `set ignore_error_messages`) and which always fail (`set always_fail_error_messages`)."""

    def __init__(self, ignored):
        self.ignored = set(ignored or [])
        self.always_fail = set(ALWAYS_FAIL_ERRORS)
        self.skip_reason = None

    def is_ignored(self, message: str) -> bool:
        """True (and remember why the file is skipped) if `message` is an ignored error."""
        for m in self.ignored:
            if m in message:
                self.skip_reason = f"skip on error_message matching {m!r}"
                return True
        return False

    def always_fails(self, message: str) -> bool:
        """True if `message` fails even a record that expects an error."""
        return any(m in message for m in self.always_fail)

    def set_messages(self, option: str, words: list[str]):
        """`set ignore_error_messages|always_fail_error_messages a, b, ...`."""
        target = self.ignored if option == "ignore_error_messages" else self.always_fail
        target.clear()
        for part in " ".join(words).split(","):
            part = part.strip()
            if part:
                target.add(part)
