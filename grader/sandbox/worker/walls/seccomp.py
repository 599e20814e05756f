"""seccomp: the last wall, after the others, refusing the system calls that could undo them or reach beyond the
worker. No tracing or reading other processes, no mounts or namespaces (which could undo the view), no kernel
keys, BPF or modules. setsid() does nothing (returns 0): its children stay in its session and PID namespace, and
a file that detaches one still runs as it would elsewhere."""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from grader.sandbox.worker.walls import linux

_DENY = ("ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "unshare", "setns",
         "open_tree", "move_mount", "fsopen", "fsmount", "mount_setattr", "kexec_load", "init_module", "finit_module",
         "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd")
_NOOP = ("setsid",)
_SYSCALLS = {
    "x86_64": (0xC000003E, {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165,
                            "umount2": 166, "pivot_root": 155, "unshare": 272, "setns": 308, "kexec_load": 246,
                            "init_module": 175, "finit_module": 313, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
                            "add_key": 248, "request_key": 249, "userfaultfd": 323, "setsid": 112}),
    "aarch64": (0xC00000B7, {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40,
                             "umount2": 39, "pivot_root": 41, "unshare": 97, "setns": 268, "kexec_load": 104,
                             "init_module": 105, "finit_module": 273, "bpf": 280, "perf_event_open": 241,
                             "keyctl": 219, "add_key": 217, "request_key": 218, "userfaultfd": 282, "setsid": 157}),
}
_NEW_MOUNT_API = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsmount": 432, "mount_setattr": 442}


def install() -> None:
    """Install the filter above for this process and every child (needs no privileges, with no_new_privs)."""
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}")
    arch, numbers = _SYSCALLS[machine]
    numbers = {**numbers, **_NEW_MOUNT_API}
    allow, kill, eperm, noop = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM, 0x00050000
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, kill), (ld, 0, 0, 0)]
    if machine == "x86_64":  # the x32 ABI numbers the same calls differently: none of it
        prog += [(jset, 0, 1, 0x40000000), (ret, 0, 0, eperm)]
    for name in _DENY + _NOOP:
        prog += [(jeq, 0, 1, numbers[name]), (ret, 0, 0, noop if name in _NOOP else eperm)]
    prog.append((ret, 0, 0, allow))
    code = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(buf))
    linux.no_new_privs()
    linux.check(linux.libc.prctl(22, 2, ctypes.c_char_p(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")  # SECCOMP_MODE_FILTER
