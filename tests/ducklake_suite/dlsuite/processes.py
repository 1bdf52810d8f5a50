"""Child-process helpers shared by the backends and the orchestrator."""

from __future__ import annotations

import os
import signal
import socket
import time


def kill_group(proc, sig=signal.SIGKILL):
    """Signal the process group of `proc` (started with start_new_session), if alive."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def wait_for_port(host, port, timeout, proc) -> str | None:
    """Wait until `host:port` accepts connections; an error message if `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"server exited with code {proc.returncode}"
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.1)
    return f"port {host}:{port} not open after {timeout:.0f}s"


def tail(path, lines=10) -> str:
    """The last `lines` lines of a log file, joined with ` | `."""
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().splitlines()[-lines:])
    except OSError:
        return "(no server output)"
