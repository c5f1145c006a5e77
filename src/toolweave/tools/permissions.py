"""Permissions a tool declares and the policy that decides, before execution, whether it may run.

Deny before execute: the policy is consulted by the registry for every call and a denial is a
`PermissionDenied` error, never a silent skip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

from toolweave.errors import ConfigError
from toolweave.tools.errors import PermissionDenied

_CUSTOM_NAME = re.compile(r"^[a-z][a-z0-9_.-]*:[a-z0-9_.*-]+$")


class Permission:
    """A capability a tool needs. Built-ins are class attributes; others come from `custom`."""

    __slots__ = ("value",)

    READ: ClassVar[Permission]
    WRITE: ClassVar[Permission]
    DELETE: ClassVar[Permission]
    NETWORK: ClassVar[Permission]
    SHELL: ClassVar[Permission]
    FILESYSTEM: ClassVar[Permission]

    def __init__(self, value: str) -> None:
        self.value = value

    @classmethod
    def custom(cls, name: str) -> Permission:
        """A namespaced permission such as ``"db:write"`` or ``"mcp:github"``."""
        if not _CUSTOM_NAME.match(name):
            raise ConfigError(
                f"custom permission {name!r} must look like 'namespace:name' "
                "(lowercase letters, digits, '_', '.', '-'; e.g. 'db:write')"
            )
        return cls(name)

    @classmethod
    def parse(cls, value: str | Permission) -> Permission:
        """Accept a Permission or its string form (``"read"``, ``"db:write"``)."""
        if isinstance(value, Permission):
            return value
        builtin = _BUILTINS.get(value.lower())
        return builtin if builtin is not None else cls.custom(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Permission) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Permission) -> bool:
        return self.value < other.value

    def __repr__(self) -> str:
        if self.value in _BUILTINS:
            return f"Permission.{self.value.upper()}"
        return f"Permission.custom({self.value!r})"

    def __str__(self) -> str:
        return self.value


Permission.READ = Permission("read")
Permission.WRITE = Permission("write")
Permission.DELETE = Permission("delete")
Permission.NETWORK = Permission("network")
Permission.SHELL = Permission("shell")
Permission.FILESYSTEM = Permission("filesystem")
_BUILTINS = {
    p.value: p
    for p in (
        Permission.READ,
        Permission.WRITE,
        Permission.DELETE,
        Permission.NETWORK,
        Permission.SHELL,
        Permission.FILESYSTEM,
    )
}


def permission_set(values: Iterable[str | Permission] | None) -> frozenset[Permission]:
    """Normalise user input (strings or Permissions) into the frozenset tools carry."""
    return frozenset(Permission.parse(v) for v in values or ())


DEFAULT_ALLOWED: frozenset[Permission] = frozenset({Permission.READ, Permission.NETWORK})
DEFAULT_DENIED: frozenset[Permission] = frozenset({Permission.DELETE, Permission.SHELL})
ASK_BY_DEFAULT: frozenset[Permission] = frozenset({Permission.DELETE, Permission.SHELL})
"""Permissions whose tools need approval unless a rule or the policy allows them."""


class PermissionPolicy:
    """Decides which permissions may be exercised.

    Rules, in order: a denied permission always loses; an allowed one passes; when `allowed`
    is non-empty it is a whitelist, so anything else is denied; with `allowed` empty,
    `allow_unspecified` decides.

    Leaving `allowed` or `denied` out gives the safe defaults (allow READ and NETWORK, deny
    DELETE and SHELL), so `PermissionPolicy()` is a read-mostly policy; pass `[]` to empty a
    list (`PermissionPolicy(allowed=[], denied=[])` allows everything).
    """

    __slots__ = ("allow_unspecified", "allowed", "denied")

    def __init__(
        self,
        allowed: Iterable[str | Permission] | None = None,
        denied: Iterable[str | Permission] | None = None,
        allow_unspecified: bool = True,
    ) -> None:
        self.allowed = DEFAULT_ALLOWED if allowed is None else permission_set(allowed)
        self.denied = DEFAULT_DENIED if denied is None else permission_set(denied)
        self.allow_unspecified = allow_unspecified

    @classmethod
    def allow_all(cls) -> PermissionPolicy:
        """Every permission allowed, and no asking: this opts out of the safe default that
        makes shell, delete and destructive tools ask for approval."""
        return cls(allowed=[], denied=[], allow_unspecified=True)

    def skips_asking(self, permissions: frozenset[Permission]) -> bool:
        """True when this policy itself grants the call, so the ask-by-default of shell and
        delete tools does not apply: `allow_all()`, or SHELL/DELETE named in `allowed`."""
        if not self.allowed and not self.denied and self.allow_unspecified:
            return True
        asking = permissions & ASK_BY_DEFAULT
        return bool(asking) and asking <= self.allowed and not asking & self.denied

    def is_allowed(self, permission: Permission) -> bool:
        if permission in self.denied:
            return False
        if permission in self.allowed:
            return True
        if self.allowed:
            return False
        return self.allow_unspecified

    def check(self, tool_name: str, permissions: frozenset[Permission]) -> None:
        """Raise `PermissionDenied` for the first (sorted) permission the policy refuses."""
        if not permissions:
            return
        for permission in sorted(permissions):
            if not self.is_allowed(permission):
                if permission in self.denied:
                    reason = "it is denied by the policy (remove it from `denied` to allow it)"
                    if self.denied is DEFAULT_DENIED:
                        reason = _by_default(reason, "denied", self.denied)
                elif self.allowed:
                    reason = (
                        "it is not in the policy's allowed list (add it to `allowed` to allow it)"
                    )
                    if self.allowed is DEFAULT_ALLOWED:
                        reason = _by_default(reason, "allowed", self.allowed)
                else:
                    reason = (
                        "unspecified permissions are not allowed (allow_unspecified=False; add "
                        "it to `allowed` to allow it)"
                    )
                raise PermissionDenied(
                    f"tool {tool_name!r} needs permission {permission.value!r} and {reason}",
                    tool=tool_name,
                    permission=permission.value,
                )

    def __repr__(self) -> str:
        return (
            f"PermissionPolicy(allowed={sorted(p.value for p in self.allowed)}, "
            f"denied={sorted(p.value for p in self.denied)}, "
            f"allow_unspecified={self.allow_unspecified})"
        )


def _by_default(reason: str, field: str, values: frozenset[Permission]) -> str:
    """Say that a list the caller never passed is the default, so the fix is to pass one."""
    listed = sorted(p.value for p in values)
    return reason[:-1] + f"; `{field}` was not given, so it is the default {listed})"
