#!/usr/bin/env python3
"""Inventory-mirror and event figures for BENCHMARKS.md ("Inventory mirror and
events"). Loopback only, bounded in time, standard library only.

    python3 bench/events.py [BINARY] [PHASE_SECONDS]

BINARY defaults to target/release/dms-bridge (build it first:
`cargo build --release --bin dms-bridge`); PHASE_SECONDS to 60.

(a) Upstream requests per hour against agent traffic: a bridge mirroring
    demo-cdk's inventory every 10 s (bench/uncached.toml with
    `inventory_sync = "10s"`: read cache off, so every call is answered from
    the mirror) in front of the demo's CDK mock,
    at 1 call/s and at 100 calls/s for PHASE_SECONDS each. The requests come
    from the bridge's own /metrics.
(b) Event end to end, lead -> webhook: a lead through the demo, until the
    demo's webhook receiver has its `lead.created` (20 samples).
(c) Webhook throughput: 300 leads at once through the demo; events delivered
    per second until the receiver has every `lead.created`.
(d) Event end to end, vendor push -> events_list: the demo CDK mock's
    price drop pushes a Fortellis-style event to the bridge's inbound
    endpoint; time until `events_list` shows the `vehicle.updated` (10
    samples). Skipped, with a note, when the demo has no such endpoint.

Prints one JSON line per measurement.
"""

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/dms-bridge")
PHASE = int(sys.argv[2]) if len(sys.argv) > 2 else 60
PROCS = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http(url, body=None, headers=None, method=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def call(url, token, tool, args):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": args}}
    text = http(url, body, {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
        "Authorization": f"Bearer {token}",
    })
    result = json.loads(text)["result"]
    if result.get("isError"):
        raise RuntimeError(f"{tool} failed: {text[:300]}")
    return result["structuredContent"]


def wait_ready(url):
    for _ in range(200):
        try:
            http(url)
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"not ready: {url}")


def start(args, log):
    out = open(log, "w")
    proc = subprocess.Popen([BIN] + args, stdout=out, stderr=open(log + ".err", "w"))
    PROCS.append(proc)
    return proc


def start_demo(tmp):
    port = free_port()
    log = os.path.join(tmp, f"demo-{port}.out")
    start(["demo", "--listen", f"127.0.0.1:{port}"], log)
    wait_ready(f"http://127.0.0.1:{port}/healthz")
    banner = open(log).read()
    cdk = re.search(r"CDK/Fortellis-shaped API at (http://[0-9.:]+?)/cdk", banner).group(1)
    hook = re.search(r"curl (\S+)/webhooks/deliveries", banner).group(1)
    return f"http://127.0.0.1:{port}", cdk, hook, banner


def metric_sum(base, name):
    text = http(f"{base}/metrics")
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(f"dms_bridge_{name}{{"))


def upstream_requests(base):
    return metric_sum(base, "upstream_requests_total")


def mirror_reads(base):
    return metric_sum(base, "mirror_syncs_total")


def between_reads(base, every):
    """Waits until half an interval after the mirror's next read, so a phase
    of whole intervals holds a whole number of reads, wherever it starts."""
    seen = mirror_reads(base)
    while mirror_reads(base) == seen:
        time.sleep(0.05)
    time.sleep(every / 2)


def paced(url, token, args, rate, seconds):
    """`rate` calls a second for `seconds`, from enough threads to keep up."""
    done, stop = [0], time.monotonic() + seconds
    lock = threading.Lock()
    threads = max(1, rate // 20)

    def worker(offset):
        tick = time.monotonic() + offset
        while True:
            now = time.monotonic()
            if now >= stop:
                return
            if tick > now:
                time.sleep(tick - now)
            call(url, token, "inventory_search", args)
            with lock:
                done[0] += 1
            tick += threads / rate

    pool = [threading.Thread(target=worker, args=(i / rate,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return done[0]


def requests_per_hour(tmp):
    _, cdk, _, _ = start_demo(tmp)
    port = free_port()
    config = open(os.path.join(ROOT, "bench/uncached.toml")).read()
    config = config.replace('inventory_sync = "off"', 'inventory_sync = "10s"')
    config = config.replace("{listen}", f"127.0.0.1:{port}").replace("{cdk_url}", cdk)
    config = config.replace("{store}", os.path.join(tmp, f"mirror-{port}.db"))
    path = os.path.join(tmp, "mirror.toml")
    open(path, "w").write(config)
    start(["serve", "--config", path], os.path.join(tmp, "mirror.out"))
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/healthz")
    url, args = f"{base}/mcp", {"dealership_id": "demo-cdk", "limit": 20}
    call(url, "bench-token", "inventory_search", args)
    for rate in (1, 100):
        between_reads(base, 10)
        before, reads = upstream_requests(base), mirror_reads(base)
        calls = paced(url, "bench-token", args, rate, PHASE)
        sent, reads = upstream_requests(base) - before, mirror_reads(base) - reads
        print(json.dumps({"run": "mirror_upstream_requests", "agent_calls_per_s": round(calls / PHASE, 1),
                          "seconds": PHASE, "mirror_reads": reads, "upstream_requests": sent,
                          "upstream_requests_per_hour": round(sent * 3600 / PHASE)}), flush=True)


def lead(n):
    return {
        "dealership_id": "demo-cdk", "source_agent": "bench",
        "customer": {"first_name": "Bench", "last_name": f"Lead{n}", "email": f"bench{n}-{time.time_ns()}@example.com",
                     "preferred_contact": "email"},
        "consent": {"granted_at": "2026-11-01T10:00:00Z", "allowed_channels": ["email"], "scope": ["lead_submission"],
                    "consent_text": "I agree that the dealership may email me about this request."},
        "vehicle_of_interest": {"year": 2021, "make": "Honda", "model": "Civic"},
    }


def delivered_ids(hook):
    """Ids of the `lead.created` events the demo's receiver took."""
    return {d["id"] for d in json.loads(http(f"{hook}/webhooks/deliveries"))["deliveries"]
            if json.loads(d["body"])["type"] == "lead.created"}


def wait_for(predicate, within=60.0, every=0.002):
    deadline = time.perf_counter() + within
    while time.perf_counter() < deadline:
        if predicate():
            return time.perf_counter()
        time.sleep(every)
    raise RuntimeError("timed out")


def lead_to_webhook(demo, hook):
    url = f"{demo}/mcp"
    samples = []
    for n in range(20):
        seen = len(delivered_ids(hook))
        start_at = time.perf_counter()
        call(url, "demo-token-cdk", "leads_create", lead(n))
        end_at = wait_for(lambda: len(delivered_ids(hook)) > seen)
        samples.append((end_at - start_at) * 1000)
    samples.sort()
    print(json.dumps({"run": "event_lead_to_webhook_ms", "samples": len(samples),
                      "p50": round(statistics.median(samples), 1), "p95": round(samples[18], 1),
                      "max": round(samples[-1], 1)}), flush=True)


def webhook_throughput(demo, hook, count=300):
    url = f"{demo}/mcp"
    seen = len(delivered_ids(hook))
    start_at = time.perf_counter()
    threads = [threading.Thread(target=lambda i=i: call(url, "demo-token-cdk", "leads_create", lead(1000 + i)))
               for i in range(count)]
    for i in range(0, count, 8):
        batch = threads[i:i + 8]
        for t in batch:
            t.start()
        for t in batch:
            t.join()
    accepted_at = time.perf_counter()
    end_at = wait_for(lambda: len(delivered_ids(hook)) >= seen + count, within=300, every=0.02)
    print(json.dumps({"run": "webhook_throughput", "leads": count,
                      "accept_s": round(accepted_at - start_at, 2),
                      "all_lead_created_delivered_s": round(end_at - start_at, 2),
                      "lead_created_events_per_s": round(count / (end_at - start_at), 1)}), flush=True)


def push_to_events(demo, cdk, banner):
    if "price-drop" not in banner:
        print(json.dumps({"run": "event_push_to_events_list_ms", "skipped": "the demo has no vendor push"}))
        return
    url = f"{demo}/mcp"
    cursor = call(url, "demo-token-cdk", "events_list", {"dealership_id": "demo-cdk"})["next_cursor"]
    samples = []
    for _ in range(10):
        start_at = time.perf_counter()
        http(f"{cdk}/cdk/admin/price-drop", {}, method="POST")

        def arrived():
            nonlocal cursor
            page = call(url, "demo-token-cdk", "events_list",
                        {"dealership_id": "demo-cdk", "cursor": cursor, "types": ["vehicle.updated"]})
            cursor = page["next_cursor"]
            return bool(page["events"])

        end_at = wait_for(arrived, within=30, every=0.005)
        samples.append((end_at - start_at) * 1000)
    samples.sort()
    print(json.dumps({"run": "event_push_to_events_list_ms", "samples": len(samples),
                      "p50": round(statistics.median(samples), 1), "max": round(samples[-1], 1)}), flush=True)


def main():
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.cpu_count()} cores, {os.uname().release}, {BIN}")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            requests_per_hour(tmp)
            demo, cdk, hook, banner = start_demo(tmp)
            lead_to_webhook(demo, hook)
            webhook_throughput(demo, hook)
            push_to_events(demo, cdk, banner)
        finally:
            for p in PROCS:
                p.kill()


if __name__ == "__main__":
    main()
