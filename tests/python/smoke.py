#!/usr/bin/env python3
"""Smoke test of dms-bridge with the official Python MCP SDK (pinned in requirements.txt).

Usage:
    python tests/python/smoke.py http://127.0.0.1:PORT/mcp [path/to/dms-bridge] [path/to/smoke-calls.json]

The URL is a running `dms-bridge demo`. The binary (default target/debug/dms-bridge)
is launched once more as `dms-bridge demo --stdio` for the stdio checks.
Then every call of tests/smoke-calls.json (shared with tests/typescript/smoke.mjs) is
made through one Streamable HTTP session with demo-token-group, after `tools/list`:
`"expect": "ok"` needs a result without isError and with structuredContent; an error code
needs isError, no structuredContent and one text block holding the JSON envelope
`{"error": {code, message, retryable, ...}}` with that code. `save`, `assert` and
`present` take JSON pointers into structuredContent (ok) or the envelope (errors).
Placeholders in argument and assert strings: "{var}" as the whole string is the saved
value itself (any JSON type), inside a longer string its text; {run_id} is unique per
run and {today+N} / {today-N} the UTC date N days from now (YYYY-MM-DD).
Prints one line per check and closes with `python-smoke: N passed, M failed`;
exits non-zero when any check fails.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime, timedelta
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

GROUP_TOKEN = "demo-token-group"
EXPECTED_TOOLS = {
    "dealership_list", "dealership_get", "inventory_search", "inventory_get", "inventory_facets",
    "leads_create", "leads_get", "leads_list", "deals_request_trade_value",
    "service_check_availability", "service_book_appointment", "service_cancel_appointment",
    "service_get_appointment",
    "service_get_repair_order", "service_list_repair_orders", "events_list",
}
# The AutomotiveMCP (canonical) names, which initialize advertises and _meta carries.
CANONICAL_TOOLS = {name.replace("_", ".", 1) for name in EXPECTED_TOOLS}
# What an initialize-era session negotiates, and what the SDK's default
# client (server/discover first) negotiates with a server of both eras.
EXPECTED_PROTOCOL = "2025-11-25"
STATELESS_PROTOCOL = "2026-07-28"
CHECK_TIMEOUT_S = 60

REPO = Path(__file__).resolve().parents[2]


class CheckFailed(AssertionError):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """An initialized session over Streamable HTTP, with `Authorization: Bearer` when a token is given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30.0) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def structured(result: Any) -> dict[str, Any]:
    check(result.structured_content is not None, "the result has no structuredContent")
    return result.structured_content


def error_envelope(result: Any) -> dict[str, Any]:
    """The error of an isError result: one text block whose text is `{"error": {...}}`."""
    content = result.content
    check(len(content) == 1 and getattr(content[0], "type", None) == "text",
          f"expected one text block, got {[getattr(b, 'type', None) for b in content]}")
    try:
        envelope = json.loads(content[0].text)
    except ValueError:
        raise CheckFailed(f"the text block is not JSON: {content[0].text[:200]!r}") from None
    error = envelope.get("error") if isinstance(envelope, dict) else None
    check(isinstance(error, dict), f"the text block has no error object: {content[0].text[:200]!r}")
    check(isinstance(error.get("code"), str), "error.code is not a string")
    check(isinstance(error.get("message"), str), "error.message is not a string")
    check(isinstance(error.get("retryable"), bool), "error.retryable is not a boolean")
    return envelope


def error_summary(result: Any) -> str:
    try:
        error = error_envelope(result)["error"]
        return f"{error['code']}: {error['message']}"
    except CheckFailed:
        return str(result.content)[:300]


async def search_used(session: ClientSession, cursor: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"dealership_id": "demo-feed", "filters": {"condition": ["used"]}, "limit": 5}
    if cursor is not None:
        args["cursor"] = cursor
    result = await session.call_tool("inventory_search", args)
    check(not result.is_error, f"inventory.search returned isError: {result.content}")
    return structured(result)


# --- Streamable HTTP -------------------------------------------------------


async def http_initialize(url: str) -> None:
    async with http_session(url, GROUP_TOKEN) as session:
        init = session.initialize_result
        check(init is not None, "no initialize result")
        assert init is not None
        print(f"    negotiated protocol version: {init.protocol_version}")
        print(f"    server: {init.server_info.name} {init.server_info.version}")
        experimental = init.capabilities.experimental or {}
        print(f"    experimental capabilities: {json.dumps(experimental, sort_keys=True)}")
        check(init.protocol_version == EXPECTED_PROTOCOL, f"protocol {init.protocol_version} != {EXPECTED_PROTOCOL}")
        check(init.capabilities.tools is not None, "the tools capability is not advertised")
        check("dms_bridge" in experimental, "experimental.dms_bridge is missing")
        check("automotive_mcp" in experimental, "experimental.automotive_mcp is missing")
        check(set(experimental["dms_bridge"].get("tools", [])) == CANONICAL_TOOLS, "experimental.dms_bridge.tools differs")


async def http_tools_list_group(url: str) -> None:
    async with http_session(url, GROUP_TOKEN) as session:
        tools = await session.list_tools()
        names = [t.name for t in tools.tools]
        print(f"    tools: {', '.join(names)}")
        check(len(names) == len(EXPECTED_TOOLS) and set(names) == EXPECTED_TOOLS, f"tools {names}")
        for tool in tools.tools:
            check(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema is not an object schema")


async def http_search_and_cursor(url: str) -> None:
    async with http_session(url, GROUP_TOKEN) as session:
        # The SDK validates structuredContent against each tool's outputSchema, so list first.
        await session.list_tools()
        page1 = await search_used(session)
        items1 = page1.get("items", [])
        print(f"    page 1: {len(items1)} items, total {page1.get('total')}, next_cursor {bool(page1.get('next_cursor'))}")
        check(len(items1) == 5, f"page 1 has {len(items1)} items, expected 5")
        check(all(v.get("condition") == "used" for v in items1), "page 1 holds a vehicle that is not used")
        cursor = page1.get("next_cursor")
        check(isinstance(cursor, str) and cursor != "", "page 1 has no next_cursor")

        page2 = await search_used(session, cursor)
        items2 = page2.get("items", [])
        print(f"    page 2: {len(items2)} items, next_cursor {bool(page2.get('next_cursor'))}")
        check(len(items2) > 0, "page 2 is empty")
        check(all(v.get("condition") == "used" for v in items2), "page 2 holds a vehicle that is not used")
        ids1 = {v["id"] for v in items1}
        ids2 = {v["id"] for v in items2}
        check(not (ids1 & ids2), f"pages overlap: {sorted(ids1 & ids2)}")


async def http_get_bad_vin(url: str) -> None:
    async with http_session(url, GROUP_TOKEN) as session:
        result = await session.call_tool("inventory_get", {"dealership_id": "demo-feed", "vin": "NOT-A-VIN"})
        check(result.is_error is True, "inventory.get with a bad VIN did not set isError")
        error = error_envelope(result)["error"]
        print(f"    error: {error.get('code')} (retryable={error.get('retryable')}): {error.get('message')}")
        check(error.get("code") == "request.invalid_arguments", f"error.code is {error.get('code')!r}")
        check(result.structured_content is None, "the error result carries structuredContent")


async def http_repair_order_with_progress(url: str) -> None:
    """demo-cdk's DMS answers through a long operation: the bridge polls and reports progress."""
    async with http_session(url, GROUP_TOKEN) as session:
        await session.list_tools()
        reports: list[tuple[float, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append((progress, message))

        result = await session.call_tool(
            "service_get_repair_order", {"dealership_id": "demo-cdk", "ro_number": "60102"},
            progress_callback=on_progress,
        )
        check(not result.is_error, f"service.get_repair_order returned isError: {result.content}")
        order = structured(result).get("repair_order", {})
        print(f"    RO {order.get('ro_number')}: {order.get('status')}, {len(order.get('jobs', []))} jobs; "
              f"{len(reports)} progress reports")
        check(order.get("status") == "in_progress", f"status {order.get('status')!r}")
        check(len(reports) >= 2, f"{len(reports)} progress reports, expected one per wait and one for the result")
        check("ORTEGA" not in str(result.content), "the customer's name reached the caller")


async def http_anonymous_tools_list(url: str) -> None:
    async with http_session(url, None) as session:
        tools = await session.list_tools()
        names = [t.name for t in tools.tools]
        print(f"    anonymous tools: {', '.join(names)}")
        check("inventory_search" in names, "the anonymous caller cannot see inventory.search")


async def http_default_client_mode(url: str) -> None:
    """The SDK's high-level Client (default mode 'auto') probes server/discover first: the
    bridge serves MCP 2026-07-28, so the client stays in that (stateless) era."""
    headers = {"Authorization": f"Bearer {GROUP_TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30.0) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            print(f"    Client(mode='auto') negotiated {client.protocol_version}")
            check(client.protocol_version == STATELESS_PROTOCOL, f"negotiated {client.protocol_version}")
            tools = await client.list_tools()
            check({t.name for t in tools.tools} == EXPECTED_TOOLS, "tools differ")


# --- stdio -----------------------------------------------------------------


async def stdio_list_and_search(binary: str) -> None:
    params = StdioServerParameters(
        command=binary,
        args=["demo", "--stdio", "--listen", "127.0.0.1:0"],
        env={"DMS_BRIDGE_TOKEN": GROUP_TOKEN, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        cwd=str(REPO),
    )
    # The server's stderr (banner, logs) goes to a file, shown only when the check fails.
    with tempfile.TemporaryFile(mode="w+") as errlog:
        try:
            await stdio_session_checks(params, errlog)
        except BaseException:
            errlog.seek(0)
            print("    server stderr (last 2000 chars):\n" + errlog.read()[-2000:])
            raise


async def stdio_session_checks(params: StdioServerParameters, errlog: Any) -> None:
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        print(f"    stdio protocol version: {init.protocol_version}")
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        check(names == EXPECTED_TOOLS, f"stdio tools {sorted(names)}")
        # By the canonical (AutomotiveMCP) name: an unlisted alias that still answers.
        result = await session.call_tool(
            "inventory.search", {"dealership_id": "demo-feed", "filters": {"condition": ["used"]}, "limit": 5}
        )
        check(not result.is_error, f"stdio inventory.search returned isError: {result.content}")
        page = structured(result)
        items = page.get("items", [])
        print(f"    stdio search: {len(items)} items, total {page.get('total')}")
        check(len(items) == 5, f"stdio search returned {len(items)} items")


# --- tests/smoke-calls.json -------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+(?:[+-]\d+)?)\}")
_MISSING = object()


def _lookup(name: str, saved: dict[str, Any]) -> Any:
    today = re.fullmatch(r"today([+-]\d+)?", name)
    if today:
        return (datetime.now(UTC) + timedelta(days=int(today.group(1) or 0))).strftime("%Y-%m-%d")
    if name in saved:
        return saved[name]
    raise CheckFailed(f"placeholder {{{name}}} has no value (an earlier call did not save it)")


def fill(value: Any, saved: dict[str, Any]) -> Any:
    """Placeholders: a whole-string "{var}" is the value itself, else its text inside the string."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return _lookup(whole.group(1), saved)

        def text(m: re.Match[str]) -> str:
            v = _lookup(m.group(1), saved)
            return v if isinstance(v, str) else json.dumps(v)

        return _PLACEHOLDER.sub(text, value)
    if isinstance(value, list):
        return [fill(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, saved) for k, v in value.items()}
    return value


def json_pointer(doc: Any, pointer: str) -> Any:
    if pointer == "":
        return doc
    check(pointer.startswith("/"), f"bad JSON pointer {pointer!r}")
    node = doc
    for raw in pointer[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return _MISSING
    return node


async def smoke_call(session: ClientSession, call: dict[str, Any], saved: dict[str, Any]) -> None:
    arguments = fill(call.get("arguments", {}), saved)
    check(isinstance(arguments, dict), f"arguments are not an object: {arguments!r}")
    result = await session.call_tool(call["tool"], arguments)
    expect = call["expect"]
    structured_on_error = False
    if expect == "ok":
        check(not result.is_error, f"isError: {error_summary(result)}")
        doc = structured(result)
    else:
        check(result.is_error is True, f"expected {expect}, got a result without isError")
        doc = error_envelope(result)
        error = doc["error"]
        recovery = error.get("recovery") or {}
        hint = f' hint="{recovery["hint"][:100]}"' if recovery.get("hint") else ""
        next_call = recovery.get("next_tool_call")
        nxt = f" next_tool_call={next_call.get('name')}" if isinstance(next_call, dict) else ""
        problems = (error.get("details") or {}).get("problems")
        pointers = f" problems={','.join(str(p.get('pointer')) for p in problems)}" if isinstance(problems, list) else ""
        print(f"    {error['code']} retryable={error['retryable']}{pointers}{hint}{nxt}")
        check(error["code"] == expect, f"error.code is {error['code']}, expected {expect}")
        structured_on_error = result.structured_content is not None
    # Saved first, so that a failed assertion does not fail the later calls too.
    unsaved = []
    for name, pointer in (call.get("save") or {}).items():
        value = json_pointer(doc, pointer)
        if value is _MISSING or value is None:
            unsaved.append(f"{pointer} (to save as {{{name}}})")
        else:
            saved[name] = value
    for pointer in call.get("present") or []:
        check(json_pointer(doc, pointer) is not _MISSING, f"{pointer} is missing")
    for pointer, want in (call.get("assert") or {}).items():
        got = json_pointer(doc, pointer)
        expected = fill(want, saved)
        check(got is not _MISSING, f"{pointer} is missing (expected {expected!r})")
        check(got == expected, f"{pointer} is {got!r}, expected {expected!r}")
    check(not unsaved, f"missing: {', '.join(unsaved)}")
    check(not structured_on_error, "the error result carries structuredContent (errors are the text block only)")


async def run_call_list(url: str, calls_path: Path) -> tuple[int, int]:
    """Every call of smoke-calls.json, one check each, through one session; (passed, failed)."""
    calls = json.loads(calls_path.read_text())
    print(f"- http: {len(calls)} calls from {calls_path.name}")
    passed = failed = 0
    saved: dict[str, Any] = {"run_id": f"{int(time.time() * 1000):x}-py"}
    async with http_session(url, GROUP_TOKEN) as session:
        # The SDK validates structuredContent against each tool's outputSchema, so list first.
        await session.list_tools()
        for call in calls:
            name = f"calls: {call['name']} -> {call['expect']}"
            try:
                with anyio.fail_after(CHECK_TIMEOUT_S):
                    await smoke_call(session, call, saved)
            except Exception as e:  # noqa: BLE001 - report every failure and go on
                failed += 1
                print(f"  FAIL {name}: {type(e).__name__}: {e}")
                if not isinstance(e, CheckFailed):
                    traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"  ok   {name}")
    return passed, failed


def single_cause(e: BaseException) -> BaseException:
    """A failed check inside a session reaches main wrapped in task-group exception groups."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


async def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    url = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else str(REPO / "target" / "debug" / "dms-bridge")
    calls_path = Path(sys.argv[3]) if len(sys.argv) > 3 else REPO / "tests" / "smoke-calls.json"

    checks: list[tuple[str, Callable[[], Awaitable[None]]]] = [
        ("http: initialize", lambda: http_initialize(url)),
        ("http: tools/list with demo-token-group", lambda: http_tools_list_group(url)),
        ("http: inventory.search used cars, follow next_cursor", lambda: http_search_and_cursor(url)),
        ("http: inventory.get with a bad VIN", lambda: http_get_bad_vin(url)),
        ("http: service.get_repair_order through a long operation, with progress",
         lambda: http_repair_order_with_progress(url)),
        ("http: tools/list anonymously", lambda: http_anonymous_tools_list(url)),
        ("http: high-level Client in default 'auto' mode", lambda: http_default_client_mode(url)),
        ("stdio: tools/list and inventory.search", lambda: stdio_list_and_search(binary)),
    ]
    passed = failed = 0
    for name, run in checks:
        print(f"- {name}")
        try:
            with anyio.fail_after(CHECK_TIMEOUT_S):
                await run()
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            failed += 1
            e = single_cause(e)
            print(f"  FAIL {name}: {type(e).__name__}: {e}")
            if not isinstance(e, CheckFailed):
                traceback.print_exc(file=sys.stdout)
        else:
            passed += 1
            print(f"  ok   {name}")
    try:
        call_passed, call_failed = await run_call_list(url, calls_path)
    except Exception as e:  # noqa: BLE001 - the session itself failed
        print(f"  FAIL http: the call list: {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stdout)
        call_passed, call_failed = 0, 1
    passed += call_passed
    failed += call_failed
    print(f"python-smoke: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
