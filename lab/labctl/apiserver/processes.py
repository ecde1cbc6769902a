"""Start, find and stop the lab's own processes (and only those)."""

import os
import signal
import subprocess
import time


class ComponentDied(RuntimeError):
    """A component exited; the message carries the tail of its log."""


def log_tail(log_path, lines=25):
    try:
        with open(log_path, errors="replace") as handle:
            content = handle.readlines()
    except OSError:
        return "(no log at %s)" % log_path
    return "".join(content[-lines:]).rstrip() or "(log is empty)"


class Component:
    """One lab process: a pid file and a log file in the run directory.

    A pid alone could be reused by an unrelated process after a reboot, so a process
    counts as ours only while its command line still names this lab's state directory.
    """

    def __init__(self, name, run_dir, marker):
        self.name = name
        self.pid_file = os.path.join(run_dir, name + ".pid")
        self.log_file = os.path.join(run_dir, name + ".log")
        self.marker = marker
        self._proc = None

    def pid(self):
        if self._proc is not None:
            # Started by this process: the exit status is authoritative, and /proc's
            # command line can still be empty while the new program is being loaded.
            return self._proc.pid if self._proc.poll() is None else None
        try:
            with open(self.pid_file) as handle:
                pid = int(handle.read().strip())
        except (OSError, ValueError):
            return None
        for _attempt in range(20):
            try:
                with open("/proc/%d/stat" % pid) as handle:
                    state = handle.read().rsplit(")", 1)[1].split()[0]
                with open("/proc/%d/cmdline" % pid, "rb") as handle:
                    cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                return None
            if state == "Z":
                return None
            if cmdline:
                return pid if self.marker in cmdline else None
            time.sleep(0.01)
        return None

    def running(self):
        return self.pid() is not None

    def start(self, argv, env=None):
        if self.running():
            return self.pid()
        with open(self.log_file, "ab") as log:
            log.write(("\n=== started %s\n" % time.strftime("%Y-%m-%dT%H:%M:%S")).encode())
            self._proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=env, start_new_session=True)
        with open(self.pid_file, "w") as handle:
            handle.write(str(self._proc.pid))
        return self._proc.pid

    def check_alive(self):
        if not self.running():
            raise ComponentDied("%s is not running; last lines of %s:\n%s"
                                % (self.name, self.log_file, log_tail(self.log_file)))

    def stop(self, timeout=15.0):
        pid = self.pid()
        if pid is None:
            _remove(self.pid_file)
            return False
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            except PermissionError:
                os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self.pid() is not None:
                time.sleep(0.05)
            if self.pid() is None:
                break
        _remove(self.pid_file)
        return True


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def wait_for(description, predicate, timeout, components=(), interval=0.1):
    """Poll a readiness probe of a local process.

    This is the one place the lab polls: a process that is still starting has no API
    to watch. Every call is bounded and says what it waited for when it gives up.
    """
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        for component in components:
            component.check_alive()
        try:
            if predicate():
                return
        except Exception as exc:  # noqa: BLE001 - any failure means "not ready yet"
            last_error = exc
        if time.monotonic() >= deadline:
            detail = " (last error: %s)" % last_error if last_error else ""
            raise TimeoutError("timed out after %.0fs waiting for %s%s" % (timeout, description, detail))
        time.sleep(interval)
