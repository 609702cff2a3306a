"""The errors of a GitHub sync: each carries a one-line message for the user."""

from __future__ import annotations


class GitHubError(Exception):
    """A sync failure with a one-line message (a bad token, an unknown repository, a bad file)."""


class Interrupted(GitHubError):
    """GitHub stayed unreachable or kept failing: running the command again resumes the sync."""


class RateLimited(Interrupted):
    pass
