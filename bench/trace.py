#!/usr/bin/env python3
"""Where does a catalog operation's time go? Per-statement server time.

    .venv/bin/python bench/trace.py [--ops insert1,insert1000,files,snapshots,attach]
                                    [--files 2000] [--snapshots 2000] [--reps 20]
                                    [--tables 0]

Runs a few DuckDB operations against RockLake and PostgreSQL (started as in
bench/run.py) through a small PostgreSQL-protocol proxy that records, for every
request DuckDB's postgres_scanner sends (a simple Query, or Parse..Sync), the
time until the server's ReadyForQuery. Statements are grouped by their text with
numbers and string literals replaced by `?`, and the report shows, per operation
and backend, the client-side time, the summed server time, the number of
round trips and the statements that cost the most. With --tables N, DuckDB
first creates N more tables (100 per commit), so the operations run on a
large catalog, and the `catalog` operation traces what bench/catalog_size.py
times: a fresh DuckDB's ATTACH, SHOW ALL TABLES, the first query of a table,
information_schema.tables and a CREATE TABLE commit. Server time includes the
loopback round trip and, for COPY FROM STDIN, the client sending the rows.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import socket
import statistics
import struct
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run as bench  # noqa: E402


class Proxy:
    """Forwards 127.0.0.1:listen -> 127.0.0.1:target and records (label, seconds)
    for every request/ReadyForQuery pair (`take`); with `timeline`, also
    (connection, label, start, end, SQLSTATE of an error or None) on the
    perf_counter clock (`take_timeline`)."""

    def __init__(self, target_port: int, timeline: bool = False):
        self.target = target_port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.records = []
        self.timeline = [] if timeline else None
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def take(self):
        with self.lock:
            out, self.records = self.records, []
        return out

    def take_timeline(self):
        with self.lock:
            out, self.timeline = self.timeline, []
        return out

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", self.target))
            for x in (c, s):
                x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            state = {"pending": collections.deque(), "parse": None, "ssl_wait": 0}
            threading.Thread(target=self._client_to_server, args=(c, s, state), daemon=True).start()
            threading.Thread(target=self._server_to_client, args=(s, c, state), daemon=True).start()

    @staticmethod
    def _recv_exact(sock, n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def _client_to_server(self, c, s, state):
        try:
            # startup phase: untyped messages (SSLRequest/GSSENCRequest, then StartupMessage)
            while True:
                head = self._recv_exact(c, 4)
                (n,) = struct.unpack("!I", head)
                body = self._recv_exact(c, n - 4)
                code = struct.unpack("!I", body[:4])[0]
                if code in (80877103, 80877104):
                    state["ssl_wait"] += 1
                    s.sendall(head + body)
                    continue
                s.sendall(head + body)
                break
            while True:
                t = self._recv_exact(c, 1)
                (n,) = struct.unpack("!I", self._recv_exact(c, 4))
                body = self._recv_exact(c, n - 4)
                now = time.perf_counter()
                if t == b"Q":
                    state["pending"].append((body[:-1].decode(errors="replace"), now))
                elif t == b"P":
                    name_end = body.index(b"\0")
                    q_end = body.index(b"\0", name_end + 1)
                    state["parse"] = body[name_end + 1:q_end].decode(errors="replace")
                elif t == b"S":
                    state["pending"].append((state["parse"] or "(extended)", now))
                    state["parse"] = None
                s.sendall(t + struct.pack("!I", n) + body)
        except (EOFError, OSError):
            pass
        finally:
            for x in (c, s):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _server_to_client(self, s, c, state):
        error = None
        try:
            while True:
                t = self._recv_exact(s, 1)
                if state["ssl_wait"]:  # the one-byte answer to SSLRequest/GSSENCRequest
                    state["ssl_wait"] -= 1
                    c.sendall(t)
                    continue
                (n,) = struct.unpack("!I", self._recv_exact(s, 4))
                body = self._recv_exact(s, n - 4)
                c.sendall(t + struct.pack("!I", n) + body)
                if t == b"E":
                    code = body.index(b"C")
                    error = body[code + 1:code + 6].decode()
                if t == b"Z" and state["pending"]:
                    label, start = state["pending"].popleft()
                    end = time.perf_counter()
                    with self.lock:
                        self.records.append((label, end - start))
                        if self.timeline is not None:
                            self.timeline.append((id(state), label, start, end, error))
                    error = None
        except (EOFError, OSError):
            pass


NUM = re.compile(r"(?<![A-Za-z_])-?\d+(\.\d+)?")
STR = re.compile(r"'(?:[^']|'')*'")


def normalize(sql: str) -> str:
    sql = STR.sub("?", sql)
    sql = NUM.sub("?", sql)
    sql = re.sub(r"\s+", " ", sql).strip()
    # collapse repeated value lists
    sql = re.sub(r"(\(\?(, ?\?)*\))(, \(\?(, ?\?)*\))+", r"\1, ...", sql)
    return sql


class Traced:
    """A catalog reached through the proxy (rewrites the port in the ATTACH target)."""

    def __init__(self, cat: bench.Catalog, proxy: Proxy):
        self.cat = cat
        self.proxy = proxy
        port = re.search(r"port=(\d+)", cat.attach_target).group(1)
        self.attach_target = cat.attach_target.replace(f"port={port}", f"port={proxy.port}")
        self.data_path = cat.data_path

    def attach_sql(self, alias="l"):
        return (f"ATTACH '{bench.q(self.attach_target)}' AS {alias} "
                f"(DATA_PATH '{bench.q(str(self.data_path))}/')")


def port_of(cat):
    return int(re.search(r"port=(\d+)", cat.attach_target).group(1))


def summarize(records, reps):
    """-> (server total per rep, round trips per rep, [(stmt, calls/rep, ms/rep)])"""
    groups = collections.defaultdict(list)
    for label, sec in records:
        groups[normalize(label)].append(sec * 1000)
    total = sum(sum(v) for v in groups.values())
    top = sorted(((k, len(v) / reps, sum(v) / reps, statistics.median(v)) for k, v in groups.items()),
                 key=lambda x: -x[2])
    return total / reps, len(records) / reps, top


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="insert1,insert1000,files,snapshots,attach")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--snapshots", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--tables", type=int, default=0)
    ap.add_argument("--backends", default="rocklake,postgres")
    args = ap.parse_args()
    ops = args.ops.split(",")
    bench.signal.signal(bench.signal.SIGTERM, bench._exit_on_signal)

    import tempfile
    import shutil
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="rocklake-trace-"))
    duck = bench.Duck(workdir, False, False)
    binary = bench.rocklake_binary()
    backends = []
    try:
        for name in args.backends.split(","):
            backends.append(bench.RockLake(workdir, binary, duck) if name == "rocklake"
                            else bench.Postgres(workdir, duck, durable=True))
        out = []
        for b in backends:
            cat = b.new_catalog("trace")
            proxy = Proxy(port_of(cat))
            tc = Traced(cat, proxy)
            con = bench.attached(b, tc)
            con.execute("CREATE TABLE l.h (id BIGINT, v VARCHAR)")
            con.execute("CREATE TABLE l.p (id BIGINT, a INTEGER, b VARCHAR, c DOUBLE)")
            con.execute("CREATE TABLE l.f (id BIGINT, v DOUBLE)")
            for first in range(0, args.tables, 100):
                con.execute("BEGIN")
                for i in range(first, min(first + 100, args.tables)):
                    con.execute(f"CREATE TABLE l.t{i} (id BIGINT, name VARCHAR, v DOUBLE, d DATE)")
                con.execute("COMMIT")

            def op(label, fn, reps=args.reps):
                proxy.take()
                t = time.perf_counter()
                for r in range(reps):
                    fn(r)
                client = (time.perf_counter() - t) * 1000 / reps
                server, trips, top = summarize(proxy.take(), reps)
                out.append((label, b.name, client, server, trips, top))
                bench.log(f"{b.name} {label}: client {client:.1f} ms, server {server:.1f} ms, "
                          f"{trips:.0f} round trips")

            if "insert1" in ops:
                op("1-row INSERT", lambda r: con.execute(f"INSERT INTO l.h VALUES ({r}, 'x')"))
            if "insert1000" in ops:
                op("1000-row INSERT", lambda r: con.execute(
                    f"INSERT INTO l.p SELECT range + {r * 1000}, range::INTEGER, 'r' || range, "
                    f"range * 0.5 FROM range(1000)"))
            if "files" in ops:
                con.execute("CALL ducklake_set_option('l', 'data_inlining_row_limit', 0)")
                for start in range(0, args.files, 500):
                    con.execute("BEGIN")
                    for k in range(start, min(args.files, start + 500)):
                        con.execute(f"INSERT INTO l.f SELECT {k * 10} + range, range * 1.5 FROM range(10)")
                    con.execute("COMMIT")
                mid = (args.files // 2) * 10
                op(f"selective query, {args.files} files", lambda r: con.execute(
                    f"SELECT count(*), sum(v) FROM l.f WHERE id BETWEEN {mid} AND {mid + 9}").fetchall())
            if "snapshots" in ops:
                n = con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchone()[0]
                for i in range(max(0, args.snapshots - n)):
                    con.execute(f"INSERT INTO l.h VALUES ({i}, 'y')")
                n = con.execute("SELECT count(*) FROM ducklake_snapshots('l')").fetchone()[0]
                op(f"1-row INSERT at {n} snapshots",
                   lambda r: con.execute(f"INSERT INTO l.h VALUES ({r}, 'z')"))
                op(f"count(*) ducklake_snapshots ({n})", lambda r: con.execute(
                    "SELECT count(*) FROM ducklake_snapshots('l')").fetchall())
            con.close()
            if "attach" in ops:
                def attach(_r):
                    c2 = duck.connect(b.extensions)
                    c2.execute(tc.attach_sql("l"))
                    c2.execute("SELECT count(*) FROM l.h").fetchall()
                    c2.close()
                op("ATTACH + first query", attach, reps=max(5, args.reps // 2))
            if "catalog" in ops:
                fresh = {}

                def step(label, fn):
                    op(label, lambda r: fn(fresh[r]), reps=5)

                def connect(r):
                    fresh[r] = duck.connect(b.extensions)
                    fresh[r].execute(tc.attach_sql("l"))
                op("fresh ATTACH", connect, reps=5)
                step("SHOW ALL TABLES", lambda c: c.execute("SHOW ALL TABLES").fetchall())
                step("first query of a table", lambda c: c.execute("SELECT count(*) FROM l.h").fetchall())
                step("information_schema.tables",
                     lambda c: c.execute("SELECT count(*) FROM information_schema.tables").fetchall())
                step("CREATE TABLE commit", lambda c: c.execute(f"CREATE TABLE l.x_{id(c)} (id BIGINT)"))
                for c in fresh.values():
                    c.close()
            cat.close()
    finally:
        for b in backends:
            b.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    for label, name, client, server, trips, top in out:
        print(f"\n## {label} — {name}: client {client:.1f} ms/op, server {server:.1f} ms/op, "
              f"{trips:.1f} round trips/op")
        for stmt, calls, total, med in top[:args.top]:
            s = stmt if len(stmt) < 160 else stmt[:157] + "..."
            print(f"  {total:8.2f} ms  {calls:5.1f}x  (median {med:.2f})  {s}")


if __name__ == "__main__":
    main()
