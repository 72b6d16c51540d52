# The first process (pid 1) of a root agent's container, run as `python3 -I -S -c THIS`.
# It reads its standard input (the stream the sandbox's maker holds) until end of file,
# then ends, and the container with it; meanwhile it reaps every orphan.
#
# A root agent can become any user (it needs SETUID for the services it sets up), so any
# process of the container is one it could signal, but pid 1: the kernel delivers to a
# namespace's first process, from inside that namespace, only the signals it handles, and
# this one ignores all but SIGCHLD. The engine's SIGKILL comes from outside, and is never
# refused.
import os
import signal


def _reap(_signum, _frame):
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


for _number in range(1, signal.NSIG):
    if _number in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
        continue
    try:
        signal.signal(_number, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
signal.signal(signal.SIGCHLD, _reap)
_reap(None, None)
while os.read(0, 65536):
    pass
os._exit(0)
