"""The seccomp filter bubblewrap applies inside the sandbox: no Unix sockets, no io_uring, no
kernel keyring.

A read-only mount does not stop `connect()` to a Unix socket file on it (a socket is not a file
the mount's write bit covers), so `/run/docker.sock`, a desktop bus or any host service
listening on a socket under the visible filesystem would be a way out. The filter makes
`socket(AF_UNIX, ...)` fail with EPERM (as sandbox-runtime's does), refuses `io_uring_setup`
(io_uring can create sockets without the `socket` call) and the keyring calls (`add_key`,
`request_key`, `keyctl`: the host user's session and user keyrings, which hold credentials,
would otherwise be readable), and kills a process that enters the
kernel through another ABI (32-bit or x32 calls, whose numbers the filter does not check).

The program is classic BPF, written out here (no libseccomp): `program()` returns its bytes for
`bwrap --seccomp FD`, or None on an architecture it has no numbers for.
"""

from __future__ import annotations

import os
import platform
import struct
import sys

_ARCHES = {  # machine -> (AUDIT_ARCH_*, socket, then add_key, request_key, keyctl numbers)
    "x86_64": (0xC000003E, 41, (248, 249, 250)),
    "aarch64": (0xC00000B7, 198, (217, 218, 219)),
}
_SYS_IO_URING_SETUP = 425  # the same on every architecture
_AF_UNIX = 1
_X32_BIT = 0x40000000
_LD_ABS_W, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW, _KILL_PROCESS = 0x7FFF0000, 0x80000000
_ERRNO_EPERM = 0x00050000 | 1
_NR, _ARCH, _ARG0 = 0, 4, 16 if sys.byteorder == "little" else 20  # seccomp_data offsets


def program() -> bytes | None:
    """The filter as `struct sock_filter[]` bytes, or None where the machine is unknown."""
    known = _ARCHES.get(platform.machine())
    if known is None:
        return None
    arch, socket_nr, keyring = known
    refused = (_SYS_IO_URING_SETUP, *keyring)
    steps = [  # (code, jump if true, jump if false, k); jumps count the steps skipped
        (_LD_ABS_W, 0, 0, _ARCH),
        (_JEQ, 0, 7 + len(refused), arch),  # another ABI -> kill
        (_LD_ABS_W, 0, 0, _NR),
        (_JSET, 5 + len(refused), 0, _X32_BIT),  # x32 -> kill
    ]
    steps += [  # io_uring_setup and the keyring calls -> EPERM
        (_JEQ, 3 + len(refused) - i, 0, nr) for i, nr in enumerate(refused)
    ]
    steps += [
        (_JEQ, 0, 2, socket_nr),  # not socket() -> allow
        (_LD_ABS_W, 0, 0, _ARG0),
        (_JEQ, 1, 0, _AF_UNIX),  # socket(AF_UNIX) -> EPERM
        (_RET, 0, 0, _ALLOW),
        (_RET, 0, 0, _ERRNO_EPERM),
        (_RET, 0, 0, _KILL_PROCESS),
    ]
    return b"".join(struct.pack("=HBBI", *step) for step in steps)


def program_fd(data: bytes) -> int:
    """A descriptor bwrap can read the program from (an anonymous memory file at offset 0)."""
    fd = os.memfd_create("toolweave-seccomp", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
