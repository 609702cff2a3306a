"""How every `ask` command ends: its exit code, and errors as one line (what happened, what to do)
instead of a traceback, unless ASK_DEBUG is set."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from assistant.control_chars import neutralize
from assistant.errors import AssistantError, UsageError
from assistant.redact import redact

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_ABSTAIN = 0, 1, 2, 3


def run_command(command: Callable[[], int]) -> int:
    """Run a command; map its errors to one line on stderr and an exit code."""
    debug = os.environ.get("ASK_DEBUG", "").lower() in ("1", "true", "yes")
    try:
        return command()
    except UsageError as exc:
        print(f"ask: {_shown(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except AssistantError as exc:
        if debug:
            raise
        print(f"ask: {_shown(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ask ... | head`: the reader has what it wanted; Python's own exit flush must not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, no traceback
        if debug:
            raise
        print(f"ask: unexpected error ({type(exc).__name__}: {_shown(exc)}); rerun with ASK_DEBUG=1 for "
              "the traceback", file=sys.stderr)
        return EXIT_ERROR


def _shown(exc: BaseException) -> str:
    """An error's text as the terminal may see it: one line, no secrets, no escape sequences."""
    return " ".join(redact(neutralize(str(exc))).split())
