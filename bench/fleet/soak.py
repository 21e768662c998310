#!/usr/bin/env python3
"""The fleet soak (issue 30; bench/fleet/soak.sh runs it): for DURATION seconds, N agents
write through R omnigraph-server replicas over one graph — each round an agent creates a
fresh branch, inserts K one-row Persons with names no one else uses, and merges the branch
into main — while faults are injected: every KILL_EVERY seconds one replica is killed with
SIGKILL and started again; every OUTAGE_EVERY seconds the store goes down for OUTAGE_MS
(the counting adapter's OG_STORE_DOWN_FILE; only with the counting store).  An agent whose
replica is gone moves to the next one; a 503 is waited out (Retry-After, capped at 0.2 s).
Nothing is retried blindly: a write whose answer was lost is "unknown".

Afterwards every branch is merged into main once more (the store up, every replica up),
and main is read through every replica: each acknowledged insert must be there exactly once,
each unknown one at most once, and no name that was never written may be there.  Prints one
JSON object (counts, faults, ops/s, verdict) and exits 1 on a violation.

Usage: soak.py OMNIGRAPH_SERVER GRAPH_URI WORKDIR  (knobs in the environment: DURATION,
AGENTS, REPLICAS, K, KILL_EVERY, OUTAGE_EVERY, OUTAGE_MS; see soak.sh)
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

SERVER, URI, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
DURATION = float(os.environ.get("DURATION", "180"))
AGENTS = int(os.environ.get("AGENTS", "16"))
REPLICAS = int(os.environ.get("REPLICAS", "2"))
K = int(os.environ.get("K", "3"))
KILL_EVERY = float(os.environ.get("KILL_EVERY", "10"))
OUTAGE_EVERY = float(os.environ.get("OUTAGE_EVERY", "0"))
OUTAGE_MS = float(os.environ.get("OUTAGE_MS", "700"))
DOWN = os.environ.get("OG_STORE_DOWN_FILE", "")
MUT = "query add($n: String) { insert Person { name: $n, age: 1 } }"


class Replica:
    def __init__(self, i):
        self.i, self.proc, self.addr = i, None, None
        self.lock = threading.Lock()

    def start(self):
        listen = os.path.join(WORK, "listen.%d" % self.i)
        out = open(listen, "w")
        log = open(os.path.join(WORK, "server.%d.log" % self.i), "a")
        self.proc = subprocess.Popen([SERVER, "--graph", "g=" + URI, "--bind", "127.0.0.1:0", "--unauthenticated"],
                                     stdout=out, stderr=log)
        for _ in range(600):
            with open(listen) as f:
                for line in f:
                    if line.startswith("OMNIGRAPH_LISTEN_ADDR="):
                        self.addr = line.strip().split("=", 1)[1]
                        return
            time.sleep(0.05)
        raise SystemExit("soak: replica %d did not start" % self.i)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


replicas = [Replica(i) for i in range(REPLICAS)]
lock = threading.Lock()
acked, unknown, attempted = set(), set(), set()
stats = {"writes": 0, "merges": 0, "merge_ok": 0, "s503": 0, "conn_lost": 0, "other": 0, "kills": 0, "outages": 0,
         "errors": []}
branches = []
stop = threading.Event()


def post(conn_box, path, body):
    """One request on the agent's connection; (status, json) or (None, None) if the answer was lost."""
    try:
        conn_box[0].request("POST", "/graphs/g/" + path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn_box[0].getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data) if data else None, r.getheader("Retry-After")
        except ValueError:
            return r.status, None, None
    except (OSError, http.client.HTTPException):
        conn_box[0].close()
        return None, None, None


def connect(i):
    rep = replicas[i % REPLICAS]
    host, port = rep.addr.rsplit(":", 1)
    return http.client.HTTPConnection(host, int(port), timeout=60)


def agent(a):
    which = a
    box = [connect(which)]
    rnd = 0
    while not stop.is_set():
        b = "s%d-%d" % (a, rnd)
        st, _, ra = post(box, "branches", {"name": b, "from": "main"})
        if st != 200:
            if st is None:
                which += 1
                box[0] = connect(which)
            elif st == 503:
                time.sleep(0.2)
            rnd += 1  # a branch create that may have happened: use a fresh name
            continue
        with lock:
            branches.append(b)
        for k in range(K):
            name = "%s-%d" % (b, k)
            with lock:
                attempted.add(name)
                stats["writes"] += 1
            st, _, ra = post(box, "mutate", {"query": MUT, "name": "add", "branch": b, "params": {"n": name}})
            with lock:
                if st == 200:
                    acked.add(name)
                else:
                    unknown.add(name)
                    if st is None:
                        stats["conn_lost"] += 1
                    elif st == 503:
                        stats["s503"] += 1
                    else:
                        stats["other"] += 1
                        if len(stats["errors"]) < 5:
                            stats["errors"].append("insert %s: %s" % (name, st))
            if st is None:
                which += 1
                box[0] = connect(which)
            elif st == 503:
                time.sleep(min(0.2, float(ra or 1)))
        st, _, _ = post(box, "branches/merge", {"source": b, "target": "main"})
        with lock:
            stats["merges"] += 1
            stats["merge_ok"] += st == 200
        if st is None:
            which += 1
            box[0] = connect(which)
        rnd += 1


def faults():
    t0 = time.monotonic()
    next_kill = KILL_EVERY if KILL_EVERY > 0 else float("inf")
    next_out = OUTAGE_EVERY if OUTAGE_EVERY > 0 and DOWN else float("inf")
    while not stop.wait(0.05):
        t = time.monotonic() - t0
        if t >= next_kill:
            rep = random.choice(replicas)
            rep.kill()
            rep.start()  # a new process, maybe a new port: agents reconnect on their next error
            stats["kills"] += 1
            next_kill += KILL_EVERY
        if t >= next_out:
            open(DOWN, "w").close()
            time.sleep(OUTAGE_MS / 1000.0)
            os.unlink(DOWN)
            stats["outages"] += 1
            next_out += OUTAGE_EVERY


def main():
    for r in replicas:
        r.start()
    threads = [threading.Thread(target=agent, args=(a,)) for a in range(AGENTS)]
    ft = threading.Thread(target=faults)
    t0 = time.monotonic()
    for t in threads:
        t.start()
    ft.start()
    time.sleep(DURATION)
    stop.set()
    ft.join()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    if DOWN and os.path.exists(DOWN):
        os.unlink(DOWN)

    # settle: every branch into main once more, through replica 0, retrying conflicts and 503s
    box = [connect(0)]
    unmerged = []
    for b in branches:
        for _ in range(20):
            st, body, _ = post(box, "branches/merge", {"source": b, "target": "main"})
            if st == 200:
                break
            if st is None:
                box[0] = connect(0)
            time.sleep(0.05)
        else:
            unmerged.append(b)

    violations = []
    for rep in replicas:
        box = [connect(rep.i)]
        st, body, _ = post(box, "query", {"query": "query q() { match { $p: Person } return { $p.name } }",
                                          "branch": "main"})
        if st != 200:
            violations.append("read through replica %d: %s" % (rep.i, st))
            continue
        seen = {}
        for row in body["rows"]:
            n = row["p.name"]
            seen[n] = seen.get(n, 0) + 1
        for n in acked:
            if seen.get(n, 0) != 1:
                violations.append("acknowledged %s present %d times (replica %d)" % (n, seen.get(n, 0), rep.i))
        for n in unknown:
            if seen.get(n, 0) > 1:
                violations.append("unknown %s present %d times (replica %d)" % (n, seen[n], rep.i))
        for n, c in seen.items():
            if n not in attempted and not n.startswith("seed-"):
                violations.append("%s was never written but is present (replica %d)" % (n, rep.i))
    for r in replicas:
        r.proc.terminate()
        r.proc.wait()
    ops = stats["writes"] + stats["merges"] + len(branches)
    out = dict(stats, seconds=round(wall, 1), agents=AGENTS, replicas=REPLICAS, acked=len(acked),
               unknown=len(unknown), branches=len(branches), unmerged=unmerged[:5], ops_per_s=round(ops / wall, 1),
               violations=violations[:10], ok=not violations and not unmerged)
    print(json.dumps(out))
    sys.exit(0 if out["ok"] else 1)


if __name__ == "__main__":
    main()
