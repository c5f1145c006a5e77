"""`Permission` and `PermissionPolicy`: the four rules in order, custom permissions, and denials
that name the tool and the permission."""

from __future__ import annotations

import pytest

from toolweave.tools import Permission, PermissionDenied, PermissionPolicy

R, W, D, N, S, F = (
    Permission.READ,
    Permission.WRITE,
    Permission.DELETE,
    Permission.NETWORK,
    Permission.SHELL,
    Permission.FILESYSTEM,
)


def test_builtins_and_custom() -> None:
    assert [p.value for p in (R, W, D, N, S, F)] == [
        "read",
        "write",
        "delete",
        "network",
        "shell",
        "filesystem",
    ]
    assert Permission.parse("READ") is R and Permission.parse(S) is S
    custom = Permission.custom("db:write")
    assert custom == Permission.parse("db:write") and hash(custom) == hash(Permission("db:write"))
    assert repr(custom) == "Permission.custom('db:write')" and repr(R) == "Permission.READ"
    assert str(custom) == "db:write"
    assert sorted([W, R, custom]) == [custom, R, W]
    for bad in ("nocolon", "Upper:case", ":x", "ns:"):
        with pytest.raises(ValueError, match="namespace:name"):
            Permission.custom(bad)


@pytest.mark.parametrize(
    ("allowed", "denied", "allow_unspecified", "permission", "expected"),
    [
        # Rule 1: denied wins, even over allowed.
        ([R, N], [R], True, R, False),
        ([], [S], True, S, False),
        # Rule 2: in allowed -> ok.
        ([R, N], [D, S], True, N, True),
        # Rule 3: allowed non-empty and not in it -> denied (a whitelist).
        ([R, N], [D, S], True, W, False),
        ([R], [], True, Permission.custom("mcp:github"), False),
        # Rule 4: allowed empty -> allow_unspecified decides.
        ([], [D], True, W, True),
        ([], [D], False, W, False),
    ],
)
def test_policy_rules(
    allowed: list[Permission],
    denied: list[Permission],
    allow_unspecified: bool,
    permission: Permission,
    expected: bool,
) -> None:
    policy = PermissionPolicy(allowed=allowed, denied=denied, allow_unspecified=allow_unspecified)
    assert policy.is_allowed(permission) is expected


def test_default_policy_is_the_seeds_read_mostly_policy() -> None:
    policy = PermissionPolicy()
    assert (policy.allowed, policy.denied, policy.allow_unspecified) == ({R, N}, {D, S}, True)
    assert [p for p in (R, W, D, N, S, F) if policy.is_allowed(p)] == [R, N]
    assert not policy.is_allowed(Permission.custom("x:y"))
    # Each list defaults on its own; an explicit empty list empties it.
    assert PermissionPolicy(denied=[N]).allowed == {R, N}
    assert not PermissionPolicy(denied=[N]).is_allowed(N)
    assert PermissionPolicy(allowed=[W]).denied == {D, S}
    everything = PermissionPolicy(allowed=[], denied=[])
    assert all(everything.is_allowed(p) for p in (R, W, D, N, S, F, Permission.custom("x:y")))


@pytest.mark.parametrize(
    ("permission", "fragment"),
    [
        (S, "`denied` was not given, so it is the default ['delete', 'shell']"),
        (W, "`allowed` was not given, so it is the default ['network', 'read']"),
    ],
)
def test_denials_by_a_default_list_say_so(permission: Permission, fragment: str) -> None:
    with pytest.raises(PermissionDenied) as info:
        PermissionPolicy().check("t", frozenset({permission}))
    assert fragment in info.value.message and info.value.permission == permission.value


@pytest.mark.parametrize(
    ("policy", "reason"),
    [
        (
            PermissionPolicy(denied=[S]),
            "it is denied by the policy (remove it from `denied` to allow it)",
        ),
        (
            PermissionPolicy(allowed=[R], denied=[]),
            "it is not in the policy's allowed list (add it to `allowed` to allow it)",
        ),
        (
            PermissionPolicy(allowed=[], denied=[], allow_unspecified=False),
            "unspecified permissions are not allowed (allow_unspecified=False; add it to "
            "`allowed` to allow it)",
        ),
    ],
)
def test_check_names_tool_and_permission(policy: PermissionPolicy, reason: str) -> None:
    with pytest.raises(PermissionDenied) as info:
        policy.check("bash", frozenset({S}))
    assert info.value.tool == "bash" and info.value.permission == "shell"
    assert info.value.message == f"tool 'bash' needs permission 'shell' and {reason}"
    assert info.value.recoverable is False


def test_check_reports_the_first_refused_permission_in_sorted_order() -> None:
    policy = PermissionPolicy(allowed=["read"], denied=["network"])
    with pytest.raises(PermissionDenied) as info:
        policy.check("t", frozenset({R, W, N}))
    assert info.value.permission == "network"
    policy.check("t", frozenset({R}))
    policy.check("t", frozenset())


def test_strings_are_accepted_and_repr_is_sorted() -> None:
    policy = PermissionPolicy(allowed=["read", "db:read"], denied=["shell"])
    assert policy.allowed == {R, Permission.custom("db:read")}
    assert repr(policy) == (
        "PermissionPolicy(allowed=['db:read', 'read'], denied=['shell'], allow_unspecified=True)"
    )
