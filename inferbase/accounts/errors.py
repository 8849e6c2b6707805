"""Errors of the accounts services, for the commands and views that call them to report."""

from __future__ import annotations


class UnknownPolicyError(LookupError):
    """No routing policy has this name, neither the organization's own nor a shared one."""

    def __init__(self, name: str, available: list[str]) -> None:
        self.name = name
        self.available = available
        listed = ", ".join(available) if available else "none yet"
        super().__init__(f"No routing policy named {name!r}. Existing policies: {listed}.")


class PortalUserError(ValueError):
    """A portal user cannot be created as asked (unknown role or organization, a taken username)."""
