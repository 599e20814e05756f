"""Landlock: what a worker may read, write and reach once its other walls are up, enforced by the kernel for the
worker and every process it starts, whatever uid it runs as."""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from grader.sandbox.worker.walls import linux

SYS_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on every architecture
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_WRITE_DIR = sum(1 << i for i in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_NET_BIND_TCP, LL_NET_CONNECT_TCP = 1, 2
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1, 2


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    version = linux.libc.syscall(SYS_LANDLOCK[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(version, 0)


def restrict(read: list[str], write: list[str]) -> None:
    """Confine this process and its children for good: read and execute only under `read` (Python's files, system
    libraries), write only under `write` (its working folder, its private /tmp), no TCP, no signals or abstract
    sockets beyond its own domain (the grader and other workers are out of reach)."""
    version = abi()
    if version < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    fs = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_WRITE_DIR
    fs |= (LL_REFER if version >= 2 else 0) | (LL_TRUNCATE if version >= 3 else 0) | (LL_IOCTL_DEV if version >= 5 else 0)
    net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP if version >= 4 else 0
    scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)[: 8 if version < 4 else 16 if version < 6 else 24]
    ruleset = linux.libc.syscall(SYS_LANDLOCK[0], attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    reading = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR
    try:
        rules = [(p, reading) for p in read] + [(p, fs) for p in write] + [("/dev/null", LL_WRITE_FILE | LL_READ_FILE)]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not on this machine
            try:
                if not os.path.isdir(path):
                    access &= LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV
                rule = struct.pack("=Qi", access & fs, fd)
                if linux.libc.syscall(SYS_LANDLOCK[1], ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)):
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        linux.no_new_privs()
        if linux.libc.syscall(SYS_LANDLOCK[2], ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
