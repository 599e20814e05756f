"""The walls around a worker process: what it may use of the machine.

Runs inside the worker before any student code. As root: namespaces (network, mounts, PIDs), a uid of its own and
Landlock. As a normal user: the same namespaces inside a user namespace of its own, and Landlock. Which walls this
machine allows is found once by `probe`, run as a separate process by `confinement.walls`.

The PID namespace: after unshare(CLONE_NEWPID) the caller stays outside it; only its next child is inside, as its
PID 1. So the worker forks once: the child (PID 1, which mounts the new /proc and serves the grader) and the parent,
a relay that the grader knows by pid, which reads nothing (its /proc/self would be dangling), waits, and ends as
the child ended. The child dies with the relay (PR_SET_PDEATHSIG), and the kernel kills the namespace with it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import signal
import select
import socket
import struct
import sys

PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
SYS_CAPSET = 126 if os.uname().machine == "x86_64" else 91  # aarch64: 91
SYS_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on every architecture
_libc = ctypes.CDLL(None, use_errno=True)
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")


def become_subreaper() -> bool:
    return _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _unshare(flags: int, what: str) -> None:
    _check(_libc.unshare(flags), f"unshare({what})")


def _unshare_net() -> None:
    _unshare(CLONE_NEWNET, "CLONE_NEWNET")


def _own_user_namespace() -> None:
    """A user namespace in which this process keeps its uid and holds the capabilities to raise the other walls
    (dropped again by `_drop_capabilities` before student code runs). Reads /proc/self: before any new /proc."""
    uid, gid = os.getuid(), os.getgid()
    _unshare(CLONE_NEWUSER, "CLONE_NEWUSER")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def private_view(view: dict, workdir: str, uid: int | None) -> None:
    """A private mount namespace in which the worker's uid can read Python and nothing it should not see.

    `view` (from walls_host.view_plan): `cover` dirs that other users cannot traverse (e.g. /root, mode 700,
    holding pyenv's Python) become empty tmpfs with only the `expose` paths bound back at the same place;
    `scratch` (/tmp, /var/tmp, /dev/shm) becomes one private size-capped tmpfs, so a worker's files vanish with
    it; `hide` (every grader package but the sandbox: the reference, the rubrics, the planted bugs) becomes an
    empty read-only tmpfs. The working folder is a fresh tmpfs too, with the submission's copied folder (`src`)
    bound back; output goes through descriptors opened before this.
    """
    _unshare(CLONE_NEWNS, "CLONE_NEWNS")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here leaks to the host
    src = os.path.join(workdir, "src")
    keep = {p: os.open(p, os.O_PATH) for p in view["expose"]}  # opened in this namespace, before being covered
    if os.path.isdir(src):
        keep[src] = os.open(src, os.O_PATH)
    size = f"size={view['scratch_mb']}m"
    for d in view["cover"]:
        _mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    if view["scratch"]:
        first, *rest = view["scratch"]
        _mount("tmpfs", first, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,{size}")
        for d in rest:
            _mount(first, d, None, MS_BIND)
    os.makedirs(workdir, exist_ok=True)
    owner = f",uid={uid},gid={uid}" if uid else ""
    _mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700{owner},{size}")
    for path, fd in keep.items():
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for d in view["hide"]:
        if os.path.isdir(d):  # not already under a covered folder
            _mount("tmpfs", d, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=4k")


def _limit(res: int, value: int) -> None:
    try:
        resource.setrlimit(res, (value, value))
    except (ValueError, OSError):
        pass


def _processes_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        try:
            count += name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid
        except OSError:
            pass
    return count


def close_fds(keep: set[int]) -> None:
    """Close every inherited descriptor but `keep` (multiprocessing hands workers its fork server's and resource
    tracker's pipes, which run as root). close_range, not /proc/self/fd: nothing here may depend on /proc."""
    fd = 0
    for k in sorted(keep) + [max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], max(keep) + 1)]:
        if fd < k:  # os.closerange(n, n) closes everything from n on (close_range(n, -1))
            os.closerange(fd, k)
        fd = k + 1


# -- Landlock ---------------------------------------------------------------------------------------------------------
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_WRITE_DIR = sum(1 << i for i in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_NET_BIND_TCP, LL_NET_CONNECT_TCP = 1, 2
LL_SCOPE_ABSTRACT_UNIX, LL_SCOPE_SIGNAL = 1, 2


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    abi = _libc.syscall(SYS_LANDLOCK[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(abi, 0)


def landlock(read: list[str], write: list[str]) -> None:
    """Confine this process and its children for good: read and execute only under `read` (Python's files, system
    libraries), write only under `write` (its working folder, its private /tmp), no TCP, no signals or abstract
    sockets beyond its own domain (the grader and other workers are out of reach)."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    fs = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_WRITE_DIR
    fs |= (LL_REFER if abi >= 2 else 0) | (LL_TRUNCATE if abi >= 3 else 0) | (LL_IOCTL_DEV if abi >= 5 else 0)
    net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP if abi >= 4 else 0
    scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    ruleset = _libc.syscall(SYS_LANDLOCK[0], attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
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
                if _libc.syscall(SYS_LANDLOCK[1], ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)):
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        if _libc.syscall(SYS_LANDLOCK[2], ctypes.c_int(ruleset), ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)


def _drop_capabilities() -> None:
    """No capability left (those a user namespace gave): the mounts that hide things stay where they are."""
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # effective, permitted, inheritable: empty, for both 32-bit halves
    _check(_libc.syscall(SYS_CAPSET, header, data), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


# -- seccomp ------------------------------------------------------------------------------------------------------
# The last line, after the other walls: no tracing or reading other processes, no mounts or namespaces (which could
# undo the view), no kernel keys, BPF or modules. setsid() does nothing (returns 0): its children stay in its
# session and PID namespace, and a file that detaches one still runs as it would elsewhere.
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


def seccomp() -> None:
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
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(_libc.prctl(22, 2, ctypes.c_char_p(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")  # SECCOMP_MODE_FILTER


# -- the PID namespace ---------------------------------------------------------------------------------------------
_to_relay: int | None = None  # PID 1's end of the socket to its relay


def _split_pid_namespace() -> int:
    """Fork into the new PID namespace: returns in the child (its PID 1, with its own /proc) its end of the socket
    to the relay, for `_die_with_relay`; the parent becomes the relay and never returns."""
    global _to_relay
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid:
        ours.close()
        _relay(pid, theirs.detach())
    theirs.close()
    _to_relay = ours.detach()
    _die_with_relay(_to_relay)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # by PID 1: /proc/self is this process
    return _to_relay


def end_by_signal(sig: int) -> None:
    """End this worker as if killed by `sig`. PID 1 of a namespace cannot signal itself: its relay does, to
    itself, once this process has exited."""
    if _to_relay is not None:
        try:
            os.write(_to_relay, bytes([sig]))
        except OSError:
            pass
        os._exit(1)
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(1)


def _die_with_relay(r: int) -> None:
    """SIGKILL when the relay dies (set again after a change of uid, which clears it); if the relay is already
    gone, its end of the socket is closed: stop here."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if select.select([r], [], [], 0)[0]:
        os._exit(1)


def _relay(child: int, keep: int) -> None:
    """The worker's first process, outside the PID namespace: holds nothing but the socket whose closing tells the
    child it is gone, and ends as the child ends (a signal as that signal, or as the child asked through that
    socket: see `end_by_signal`). Reads no /proc."""
    close_fds({keep})
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    os.set_blocking(keep, False)
    try:
        asked = os.read(keep, 1)
    except OSError:
        asked = b""
    if asked and 0 < asked[0] < signal.NSIG:
        code = -asked[0]
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def enter(out_path: str, limits: dict) -> None:
    """Cut the worker off: own session, rlimits, a clean environment, a private working folder, and, where the
    host found them possible, no network, a private file system view, its own PID namespace and /proc, Landlock
    and a uid of its own (as root) or a user namespace (as a normal user). Raises OSError when one of those
    fails: the worker then refuses to run student code."""
    os.setsid()
    workdir = os.path.dirname(out_path)
    mb = 1 << 20
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * mb)
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _limit(resource.RLIMIT_FSIZE, limits["output_kb"] * 1024)
    _limit(resource.RLIMIT_NOFILE, 256)
    _limit(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full output file fails the write, it does not kill
    uid = limits.get("uid")
    if not uid and os.geteuid() != 0:  # the count is per user: what the user already runs, plus the cap
        _limit(resource.RLIMIT_NPROC, _processes_of(os.getuid()) + limits["max_processes"])
    if limits.get("userns"):
        _own_user_namespace()
    if limits.get("net"):
        _unshare_net()
    if limits.get("pids"):
        _unshare(CLONE_NEWPID, "CLONE_NEWPID")
    if limits.get("view"):
        private_view(limits["view"], workdir, uid)
    relay = _split_pid_namespace() if limits.get("pids") else None  # from here on, PID 1 of the new namespace
    os.chdir(workdir)
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}  # no CI tokens for student code
    os.environ.clear()
    os.environ.update(env, HOME=workdir, TMPDIR=workdir)
    if uid:
        _limit(resource.RLIMIT_NPROC, limits["max_processes"])
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif limits.get("userns"):
        _drop_capabilities()
    if relay is not None:
        _die_with_relay(relay)
    if limits.get("landlock"):
        plan = limits["landlock"]
        landlock(plan["read"], [workdir] + (plan["scratch"] if limits.get("view") else []))
    if limits.get("seccomp"):
        seccomp()


def probe(view: dict, uid: int, readable: list[str], workdir: str, **kw) -> dict:
    """Which walls this machine allows, tried for real in this throwaway process, in the worker's order: a user
    namespace (not root), a network namespace, a PID namespace with its own /proc, the private view, Python's
    files read as `uid` (root), Landlock, seccomp. Each value is None (possible) or why not."""
    found = {"net": None, "mounts": None, "uid": None, "pids": None, "landlock": None, "seccomp": None}
    root = os.geteuid() == 0
    if not root:
        found["uid"] = "not running as root"
        try:
            _own_user_namespace()
        except OSError as e:
            found.update(net=f"no user namespace: {e}", mounts=f"no user namespace: {e}", pids=f"no user namespace: {e}")
    if found["net"] is None:
        try:
            _unshare_net()
            with socket.socket() as s:
                s.settimeout(2)
                if s.connect_ex(("127.0.0.1", 9)) in (0, errno.ECONNREFUSED):
                    found["net"] = "the loopback interface is still reachable"
        except OSError as e:
            found["net"] = str(e)
    if found["pids"] is None:
        try:
            _unshare(CLONE_NEWPID, "CLONE_NEWPID")
        except OSError as e:
            found["pids"] = str(e)
    if found["mounts"] is None:
        try:
            private_view(view, workdir, uid if root else None)
        except OSError as e:
            found["mounts"] = str(e)
    if found["pids"] is not None:
        found.update(_probe_rest(uid, readable, workdir, root))
        return found
    # this process stays outside the new namespace and its /proc: its child is PID 1 there, as a worker's is
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            part = {"pids": None}
            try:
                _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                seen = [n for n in os.listdir("/proc") if n.isdigit()]
                if not (os.getpid() == 1 and seen == ["1"] and os.readlink("/proc/self") == "1"):
                    part["pids"] = f"other processes still visible: {seen[:3]}"
            except OSError as e:
                part["pids"] = str(e)
            part.update(_probe_rest(uid, readable, workdir, root))
            os.write(w, json.dumps(part).encode())
        finally:
            os._exit(0)
    os.close(w)
    said = b""
    while chunk := os.read(r, 4096):
        said += chunk
    os.waitpid(pid, 0)
    try:
        found.update(json.loads(said))
    except ValueError:
        found.update(pids="the PID namespace's first process died", uid=found["uid"] or "the probe died",
                     landlock="the probe died", seccomp="the probe died")
    return found


def _probe_rest(uid: int, readable: list[str], workdir: str, root: bool) -> dict:
    """The uid and Landlock parts of the probe."""
    part = {}
    if root:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            for path in readable:
                try:
                    os.listdir(path)
                except OSError:
                    part["uid"] = f"Python's files under {path} are not readable by other users"
                    break
        except OSError as e:  # e.g. a container without CAP_SETUID
            part["uid"] = str(e)
    try:
        landlock(readable, [workdir])
        os.listdir(readable[0])
        try:
            os.listdir("/")
            part["landlock"] = "Landlock did not restrict reading"
        except PermissionError:
            pass
    except OSError as e:
        part["landlock"] = str(e)
    try:
        seccomp()
        if _libc.unshare(CLONE_NEWNS) == 0 or ctypes.get_errno() != errno.EPERM:
            part["seccomp"] = "the filter did not refuse unshare"
    except OSError as e:
        part["seccomp"] = str(e)
    return part


if __name__ == "__main__":
    print(json.dumps(probe(**json.loads(sys.argv[1]))))
