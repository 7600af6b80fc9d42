"""The sandbox's seccomp filter: kernel interfaces a computation never needs answer EPERM (or ENOSYS)."""
from __future__ import annotations

import errno
import functools
import tempfile

# Kernel surfaces that let a process reach past its namespaces, inspect or change other
# processes, load code into the kernel, or change the machine: the same families container
# runtimes refuse by default. A computation in Python needs none of them.
_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "perf_event_open", "bpf",
    "userfaultfd", "keyctl", "add_key", "request_key", "mount", "umount2", "pivot_root", "chroot", "unshare",
    "setns", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
    "swapoff", "syslog", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "iopl", "ioperm", "quotactl", "lookup_dcookie", "name_to_handle_at", "open_by_handle_at",
    "fanotify_init", "io_uring_setup", "io_uring_enter", "io_uring_register", "personality", "vhangup",
    "uselib", "ustat", "sysfs", "migrate_pages", "move_pages", "mbind", "set_mempolicy", "memfd_secret",
)
# Namespace flags on clone(): a new namespace is a new place to look for kernel bugs.
_CLONE_NEW = (0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x02000000)
_AF_UNIX = 1
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) is missing, so no filter can be compiled."""


@functools.cache
def compiled_filter() -> bytes:
    """The BPF program bubblewrap installs with `--seccomp FD`, compiled once per process."""
    try:
        # optional: without libseccomp the import fails, and the sandbox reports itself unavailable
        import pyseccomp as sc
    except (ImportError, RuntimeError, OSError) as exc:  # pyseccomp raises RuntimeError without libseccomp
        raise SeccompUnavailable(f"libseccomp is not available ({exc})") from None
    deny = sc.ERRNO(errno.EPERM)
    flt = sc.SyscallFilter(sc.ALLOW)  # system calls of other ABIs (x32, i386) are killed by default
    for name in _DENIED:
        try:
            flt.add_rule(deny, name)
        except (OSError, ValueError):
            continue  # not a system call on this architecture
    # Sockets of any family but AF_UNIX: the network namespace has no interfaces anyway, and
    # the mount namespace shows no socket files, so this only narrows what is left to attack.
    flt.add_rule(deny, "socket", sc.Arg(0, sc.NE, _AF_UNIX))
    for flag in _CLONE_NEW:
        flt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes libc use clone.
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # Pushing characters into a terminal's input queue (TIOCSTI) or TIOCLINUX escapes a session.
    flt.add_rule(deny, "ioctl", sc.Arg(1, sc.EQ, _TIOCSTI))
    flt.add_rule(deny, "ioctl", sc.Arg(1, sc.EQ, _TIOCLINUX))
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0)
        return fh.read()
