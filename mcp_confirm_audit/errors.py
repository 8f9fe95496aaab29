"""Harness faults, kept apart from findings.

A finding is a fact about the target. These are facts about the run: the
configuration is wrong, or the target could not be driven at all. They must
never be shown as a pass and never be excused by a baseline.
"""

from __future__ import annotations


class AuditError(Exception):
    """Base class: one line saying what is wrong and how to fix it."""


class UsageError(AuditError):
    """The command line, a profile or a baseline is wrong (pytest exit code 4)."""


class TargetError(AuditError):
    """The target would not start, or would not speak MCP."""


class CredentialsRefused(TargetError):
    """The target answered HTTP 401 or 403: the harness's headers are missing or wrong."""
