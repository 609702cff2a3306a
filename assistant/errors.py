"""Errors whose message is safe and useful to show a user: what happened and what to do next."""


class AssistantError(Exception):
    """Base class: str(exc) is a one-line message for the user."""


class UsageError(AssistantError):
    """Bad input from the user (empty, unreadable, wrong option)."""


class BinaryInput(UsageError):
    """The input is not text (an image, a core dump, an archive of another kind)."""


class IndexMissing(AssistantError):
    pass


class IndexMismatch(AssistantError):
    pass


class IndexError_(AssistantError):
    """A corrupt or inconsistent index (named with _ to avoid shadowing the builtin)."""


class EndpointError(AssistantError):
    """The LLM endpoint could not be used; the caller falls back to the extractive answer."""
