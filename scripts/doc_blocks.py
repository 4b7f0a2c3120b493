#!/usr/bin/env python3
"""Runs the command blocks of README.md and docs/ (CI step "docs").

Every fenced block carries a mark (tests/docs.rs checks that, and the blocks
that need no server). This runs the rest, document by document, in order:

- ```sh run```     runs from the repo root with the built dms-bridge first on PATH;
                   must exit 0 within 60 s.
- ```sh demo```    the same, while `dms-bridge demo` serves on 127.0.0.1:8787; an
                   MCP answer with "isError":true fails it too.
- ```sh serve```   a long-running command: started, must answer
                   http://127.0.0.1:8787/readyz within 300 s, then stopped.
- ```python demo``` / ```js demo```  a complete SDK script run against the demo
                   (--python: an interpreter with the `mcp` SDK; --node and
                   --node-modules: Node 22 and a folder whose node_modules has
                   @modelcontextprotocol/sdk).
- ```sh manual```  counted, never run (the text says why).

Files a document's blocks write into the repo root are removed after it.
Exits non-zero when any block fails; prints one line per block.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = "http://127.0.0.1:8787"
FENCE = re.compile(r"^(\s*)```(\S*)\s*(\S*)\s*$")


def blocks_of(path):
    """(line, lang, mark, body) for each fenced block, list indentation removed."""
    out, open_block = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if open_block is None:
            m = FENCE.match(line)
            if m and m.group(2):
                open_block = (number, len(m.group(1)), m.group(2), m.group(3), [])
            continue
        start, indent, lang, mark, body = open_block
        if line.strip() == "```":
            out.append((start, lang, mark, "\n".join(body) + "\n"))
            open_block = None
        else:
            body.append(line[indent:] if line[:indent].strip() == "" else line)
    return out


def ready(url, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except Exception:
            pass
        time.sleep(0.3)
    return False


def free_of_servers():
    try:
        urllib.request.urlopen(DEMO + "/healthz", timeout=1)
        return False
    except Exception:
        return True


class Server:
    """A command serving on 127.0.0.1:8787, in its own process group."""

    def __init__(self, command, env, log):
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            ["bash", "-c", command], cwd=ROOT, env=env, stdout=self.log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        deadline = time.monotonic() + 15
        while not free_of_servers() and time.monotonic() < deadline:
            time.sleep(0.2)


def untracked():
    out = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--directory"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    return set(out.split())


def remove(paths):
    for p in paths:
        target = ROOT / p
        if target.is_dir():
            subprocess.run(["rm", "-rf", str(target)], check=True)
        elif target.exists():
            target.unlink()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the built dms-bridge")
    parser.add_argument("--python", help="a Python with the mcp SDK")
    parser.add_argument("--node", help="Node 22")
    parser.add_argument("--node-modules", help="a folder with @modelcontextprotocol/sdk installed")
    args = parser.parse_args()

    bin_dir = Path(args.bin).resolve().parent
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", NO_COLOR="1")
    logs = Path(tempfile.mkdtemp(prefix="doc-blocks-"))
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    if not free_of_servers():
        sys.exit("something already serves on 127.0.0.1:8787; stop it first")

    demo, failures, counts = None, [], {}

    def need_demo():
        nonlocal demo
        if demo is None:
            demo = Server(f"{args.bin} demo --listen 127.0.0.1:8787", env, logs / "demo.log")
            if not ready(DEMO + "/readyz", 120):
                raise RuntimeError("the demo did not become ready: " + (logs / "demo.log").read_text()[-2000:])

    def stop_demo():
        nonlocal demo
        if demo is not None:
            demo.stop()
            demo = None

    def run(command, cwd=ROOT, extra=None):
        return subprocess.run(
            command, cwd=cwd, env=dict(env, **(extra or {})), capture_output=True,
            text=True, timeout=60, stdin=subprocess.DEVNULL,
        )

    try:
        for path in files:
            before = untracked()
            for number, lang, mark, body in blocks_of(path):
                where = f"{path.relative_to(ROOT)}:{number}"
                kind = f"{lang} {mark}"
                counts[kind] = counts.get(kind, 0) + 1
                if kind not in ("sh run", "sh demo", "sh serve", "python demo", "js demo"):
                    continue
                try:
                    if kind == "sh serve":
                        stop_demo()
                        server = Server(body, env, logs / "serve.log")
                        # `cargo run` may build first.
                        ok = ready(DEMO + "/readyz", 300)
                        server.stop()
                        detail = "" if ok else (logs / "serve.log").read_text()[-2000:]
                    else:
                        if mark == "demo":
                            need_demo()
                        else:
                            stop_demo()
                        if lang == "sh":
                            r = run(["bash", "-euo", "pipefail", "-c", body])
                        elif lang == "python":
                            if not args.python:
                                raise RuntimeError("--python not given")
                            r = run([args.python, "-c", body])
                        else:
                            if not (args.node and args.node_modules):
                                raise RuntimeError("--node and --node-modules not given")
                            script = Path(args.node_modules) / ".doc-block.mjs"
                            script.write_text(body)
                            try:
                                r = run([args.node, str(script)])
                            finally:
                                script.unlink()
                        output = r.stdout + r.stderr
                        ok = r.returncode == 0 and '"isError":true' not in output.replace(" ", "")
                        detail = "" if ok else f"exit {r.returncode}\n{output[-2000:]}"
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                    ok, detail = False, str(e)
                print(f"{'ok  ' if ok else 'FAIL'} {kind:<12} {where}", flush=True)
                if not ok:
                    failures.append(f"{where} ({kind}):\n{detail}")
            remove(untracked() - before)
    finally:
        stop_demo()

    print("doc blocks: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if failures:
        print("\n".join(["", "failed blocks:"] + failures), file=sys.stderr)
        sys.exit(1)
    print("doc-blocks: every runnable block passed")


if __name__ == "__main__":
    main()
