"""The seccomp filter every process of the end state in a grading container runs under.

A grading container's root holds CAP_SYS_ADMIN (to give each process of the end state
namespaces of its own), and with it the engine's seccomp profile opens to every process
of the container the calls it otherwise refuses: namespaces, mounts, bpf, perf events.
This filter refuses exactly those again, for the process that installs it and all it
starts; it cannot be removed. Root's harness programs install it just before a command
becomes the test user:

    python3 -I -S -c "$(cat restrict.py)" ARGV...      (the runner: then runs ARGV)

and the harness's namespace program (endstate_isolate.py) imports it as endstate_restrict.
Stdlib only.
"""

import ctypes
import errno
import os
import signal
import struct
import sys

#: What Docker's default profile allows only with CAP_SYS_ADMIN.
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
#: name: (x86_64, aarch64) numbers.
_DENIED = {"bpf": (321, 280), "fanotify_init": (300, 262), "fsconfig": (431, 431), "fsmount": (432, 432),
           "fsopen": (430, 430), "fspick": (433, 433), "lookup_dcookie": (212, 18), "mount": (165, 40),
           "mount_setattr": (442, 442), "move_mount": (429, 429), "open_tree": (428, 428),
           "perf_event_open": (298, 241), "quotactl": (179, 60), "quotactl_fd": (443, 443),
           "setdomainname": (171, 162), "sethostname": (170, 161), "setns": (308, 268), "syslog": (103, 116),
           "umount2": (166, 39), "unshare": (272, 97), "pivot_root": (155, 41)}
_CLONE, _CLONE3 = (56, 220), (435, 435)
#: clone() flags Docker's profile refuses without CAP_SYS_ADMIN: every CLONE_NEW*.
_NEW_NAMESPACES = 0x7E020000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


def _filter(machine):
    """The classic BPF program: foreign architectures and x32 refused, the calls above EPERM,
    clone with a namespace flag EPERM, clone3 ENOSYS (so libc falls back to clone), the rest allowed."""
    column = 0 if machine == "x86_64" else 1
    code = [(0x20, 0, 0, 4)]  # ld arch
    labels = []  # (index of a jump, which end it jumps to when true)
    code.append((0x15, 1, 0, _AUDIT_ARCH[machine]))  # jeq arch: skip the next
    labels.append((len(code), "nosys")), code.append((0x05, 0, 0, 0))  # ja nosys
    code.append((0x20, 0, 0, 0))  # ld nr
    if machine == "x86_64":
        labels.append((len(code), "perm")), code.append((0x35, 0, 0, 0x40000000))  # jge x32 bit
    for numbers in _DENIED.values():
        labels.append((len(code), "perm")), code.append((0x15, 0, 0, numbers[column]))
    labels.append((len(code), "nosys")), code.append((0x15, 0, 0, _CLONE3[column]))
    code.append((0x15, 0, 3, _CLONE[column]))  # not clone: allow (3 ahead)
    code.append((0x20, 0, 0, 16))  # ld args[0], low half: clone's flags
    labels.append((len(code), "perm")), code.append((0x45, 0, 0, _NEW_NAMESPACES))
    code.append((0x05, 0, 0, 0))  # ja allow (next)
    ends = {"allow": len(code), "perm": len(code) + 1, "nosys": len(code) + 2}
    code += [(0x06, 0, 0, _RET_ALLOW), (0x06, 0, 0, _RET_ERRNO | errno.EPERM), (0x06, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    for at, end in labels:
        op, _, jf, k = code[at]
        offset = ends[end] - at - 1
        code[at] = (op, 0, 0, offset) if op == 0x05 else (op, offset, jf, k)
    return code


def restrict():
    """This process and all it starts: no new privileges, and the seccomp filter above."""
    machine = os.uname().machine
    if machine not in _AUDIT_ARCH:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}: refusing to run the end state here")
    code = _filter(machine)
    program = b"".join(struct.pack("HBBI", *instruction) for instruction in code)
    buffer = ctypes.create_string_buffer(program)
    fprog = struct.pack("HxxxxxxP", len(code), ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog)
    word, libc = ctypes.c_ulong, ctypes.CDLL(None, use_errno=True)
    for option, arg, what in ((38, 1, "no_new_privs"), (22, 2, "seccomp")):  # PR_SET_NO_NEW_PRIVS; SECCOMP, FILTER
        third = ctypes.addressof(fprog_buffer) if option == 22 else 0
        if libc.prctl(option, word(arg), word(third), word(0), word(0)) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"{what}: {os.strerror(code)}")




def default_signals():
    """Undo what Python's start did to signals before a program is exec'd in its place: it
    ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec. A shell
    pipeline such as `yes | head` would then print "Broken pipe" instead of ending quietly."""
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


if __name__ == "__main__" and len(sys.argv) > 1:
    try:
        restrict()
    except OSError as exc:
        print(f"endstate: no seccomp filter for this command: {exc}", file=sys.stderr)
        sys.exit(71)
    default_signals()
    os.execvp(sys.argv[1], sys.argv[1:])
