#!/usr/bin/env python3
"""The fleet workload (issue 30) against one omnigraph-server: N agents at once, each on its
own branch: create the branch from main, four one-row inserts, one update by key, a merge
into main.  Python's standard library only, one thread and one keep-alive connection per
agent (agents mostly wait on the server, as real ones do).  A 503 is retried after its
Retry-After (the server's backpressure); any other non-2xx counts as a failure.

Prints one JSON object: wall seconds, logical operations, ops/s, failures, retries, and the
p50/p99 latency in ms per kind (branch, insert, update, merge) and over all writes.
Several replicas of the server over one graph: give their addresses comma-separated; agent i
talks to replica i mod R.
Usage: agents.py HOST:PORT[,HOST:PORT...] GRAPH N
"""
import http.client
import json
import sys
import threading
import time

MUT = ("query add($n: String, $a: I32) { insert Person { name: $n, age: $a } }\n"
       "query setage($n: String, $a: I32) { update Person set { age: $a } where name = $n }\n")


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def main():
    addrs, graph, n = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
    lat = {"branch": [], "insert": [], "update": [], "merge": []}
    stats = {"failures": 0, "retries": 0, "errors": []}
    lock = threading.Lock()
    go = threading.Event()

    def call(conn, kind, path, body):
        while True:
            t0 = time.monotonic()
            try:
                conn.request("POST", "/graphs/%s/%s" % (graph, path), json.dumps(body),
                             {"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                with lock:
                    stats["failures"] += 1
                    stats["errors"].append("%s: %s" % (kind, e))
                return conn
            if r.status == 503:
                with lock:
                    stats["retries"] += 1
                time.sleep(float(r.getheader("Retry-After", "1") or 1))
                continue
            dt = (time.monotonic() - t0) * 1000.0
            with lock:
                if 200 <= r.status < 300:
                    lat[kind].append(dt)
                else:
                    stats["failures"] += 1
                    if len(stats["errors"]) < 5:
                        stats["errors"].append("%s %d: %s" % (kind, r.status, data[:200]))
            return conn

    def agent(i):
        host, port = addrs[i % len(addrs)].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        b = "agent-%d" % i
        go.wait()
        conn = call(conn, "branch", "branches", {"name": b, "from": "main"})
        for k in range(4):
            conn = call(conn, "insert", "mutate",
                        {"query": MUT, "name": "add", "branch": b, "params": {"n": "%s-%d" % (b, k), "a": k}})
        conn = call(conn, "update", "mutate",
                    {"query": MUT, "name": "setage", "branch": b, "params": {"n": "%s-0" % b, "a": 99}})
        conn = call(conn, "merge", "branches/merge", {"source": b, "target": "main"})
        conn.close()

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    go.set()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    ops = sum(len(v) for v in lat.values())
    writes = lat["insert"] + lat["update"] + lat["merge"]
    out = {"agents": n, "replicas": len(addrs), "wall_s": round(wall, 3), "ops": ops, "ops_per_s": round(ops / wall, 2),
           "failures": stats["failures"], "retries": stats["retries"], "errors": stats["errors"][:5],
           "write_p50_ms": round(pct(writes, 50), 1), "write_p99_ms": round(pct(writes, 99), 1)}
    for k, v in lat.items():
        out[k + "_p50_ms"] = round(pct(v, 50), 1)
        out[k + "_p99_ms"] = round(pct(v, 99), 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
