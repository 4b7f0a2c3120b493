#!/usr/bin/env python3
"""A2A/AAP v1.3 interop smoke test of dms-bridge with the official Python SDK.

Talks to a running `dms-bridge demo` the way a third-party buyer agent would:
through `a2a-sdk` (PyPI, pinned in requirements.txt) only, with A2A v1.0
JSON-RPC `SendMessage` and AAP v1.3 data parts. No code of ours on the wire.

Checks (one line each, `ok - name` or `FAIL - name: detail`):
  a. the demo-feed agent card, resolved by `A2ACardResolver` at
     {base}/aap/demo-feed/.well-known/agent-card.json: the AAP v1.3 extension
     (uri, params.version 1.3.0), streaming off, the five skill ids, the
     JSON-RPC interface, the bearer scheme on lead.submit; and the root
     {base}/.well-known/agent-card.json is the same (demo-feed) card;
  b. anonymous calls (no Authorization) on demo-feed: dealer.information,
     inventory.facets, inventory.search (used+cpo, sorted by price asc),
     a search whose limit 1 and price_max must be honoured (this SDK sends
     them as doubles, 1.0), inventory.vehicle of the first hit;
  c. inventory.vehicle of a VIN not in stock -> VEHICLE_NOT_FOUND (-32000);
  d. lead.submit with the bearer -> received + lead_id; the same key and
     payload again -> the same lead_id; the same key, another message ->
     IDEMPOTENCY_CONFLICT;
  e. preferred_contact sms outside allowed_channels -> CONTACT_CONSENT_REQUIRED;
  f. lead.submit without a token fails (HTTP 401 raised by the SDK);
  g. a test-drive appointment is `requested` or `proposed`, never `confirmed`;
  h. an unknown field in the data part -> SCHEMA_VALIDATION_FAILED (-32602).

Ends with `a2a-python: N passed, M failed`; exits 1 on any failure.

Run (CI does the same):
  python3 -m venv .venv-a2a
  .venv-a2a/bin/pip install -r tests/a2a/python/requirements.txt
  .venv-a2a/bin/python tests/a2a/python/aap_client.py http://127.0.0.1:8080 [TOKEN]
The token defaults to $AAP_TOKEN, else `demo-token-group`. A2A_TRACE=1 prints
every JSON-RPC request body the SDK sends to stderr.

SDK facts this script relies on (a2a-sdk 1.3.0):
  * A data part is a google.protobuf.Value, so every number is a double: the
    SDK sends `"limit": 5.0`, and answers come back as floats (`total` 3.0).
  * The JSON-RPC transport drops an object `error.data` (it keeps only an
    array of google.rpc.ErrorInfo), so the AAP code is read from
    `error.message` ("VEHICLE_NOT_FOUND: ..."). The JSON-RPC code is read from
    the exception: a typed error for codes A2A knows (-32602 ->
    InvalidParamsError), else "JSON-RPC Error <code>: <message>".
  * `AuthInterceptor` only reads card-level `securityRequirements`; the card
    asks for the bearer per skill (lead.submit), so the bearer is attached per
    call as a service parameter (sent as the Authorization header).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import sys
import uuid

from typing import Any

import httpx

from a2a.client import (
    A2ACardResolver,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
)
from a2a.client.service_parameters import (
    ServiceParametersFactory,
    with_a2a_extensions,
)
from a2a.helpers import get_data_parts, new_data_part
from a2a.types import (
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError
from google.protobuf.json_format import MessageToDict


AAP_URI = 'https://autoagentprotocol.org/extensions/aap/v1.3'
DEALERSHIP = 'demo-feed'
SKILL_IDS = {
    'dealer.information',
    'inventory.facets',
    'inventory.search',
    'inventory.vehicle',
    'lead.submit',
}
# Skill id -> media type stem (inventory.vehicle is `vehicle-detail`).
MEDIA = {
    'dealer.information': 'dealer-information',
    'inventory.facets': 'inventory-facets',
    'inventory.search': 'inventory-search',
    'inventory.vehicle': 'vehicle-detail',
    'lead.submit': 'lead-submit',
}
LIVE_STATUSES = {'available', 'intransit', 'pending'}
# Valid check digit, not in any demo inventory.
ABSENT_VIN = '1HGCM82633A004352'
AGENT_NAME = 'a2a-python-smoke'


class CheckFailed(Exception):
    """A check's expectation did not hold."""


class AapCallError(Exception):
    """The SDK raised for a call: a JSON-RPC error, or an HTTP one such as 401."""

    def __init__(self, aap_code: str | None, rpc_code: int | None, text: str):
        super().__init__(text)
        self.aap_code = aap_code
        self.rpc_code = rpc_code
        self.text = text


def expect(cond: bool, detail: str) -> None:
    if not cond:
        raise CheckFailed(detail)


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def as_aap_error(exc: A2AError) -> AapCallError:
    """The AAP code and JSON-RPC code of an SDK exception, from what it keeps."""
    text = getattr(exc, 'message', None) or str(exc)
    rpc_code = JSON_RPC_ERROR_CODE_MAP.get(type(exc))
    m = re.match(r'JSON-RPC Error (-?\d+): (.*)', text, re.S)
    if m:
        rpc_code, text = int(m.group(1)), m.group(2)
    m = re.match(r'([A-Z][A-Z_]+): ', text)
    return AapCallError(m.group(1) if m else None, rpc_code, text)


class Runner:
    def __init__(self, base: str, token: str, trace: bool):
        self.base = base.rstrip('/')
        self.token = token
        self.trace = trace
        self.passed = 0
        self.failed = 0
        self.run_id = uuid.uuid4().hex[:12]
        self.http: httpx.AsyncClient | None = None
        self.client = None
        self.card = None
        self.vehicles: list[dict[str, Any]] = []

    # ------------------------------------------------------------ plumbing
    async def check(self, name: str, coro) -> Any:
        try:
            result = await coro
        except CheckFailed as e:
            self.failed += 1
            print(f'FAIL - {name}: {e}', flush=True)
            return None
        except Exception as e:  # noqa: BLE001 - any surprise is a failed check
            self.failed += 1
            print(f'FAIL - {name}: {type(e).__name__}: {e}', flush=True)
            return None
        self.passed += 1
        print(f'ok - {name}', flush=True)
        return result

    async def _trace_request(self, request: httpx.Request) -> None:
        if request.method == 'POST':
            print(f'> {request.url} {request.content.decode()}', file=sys.stderr)

    def context(self, *, bearer: bool) -> ClientCallContext:
        """Per-call service parameters: activate the AAP extension, and the bearer."""
        updates = [with_a2a_extensions([AAP_URI])]
        if bearer:
            updates.append(
                lambda p: p.__setitem__('Authorization', f'Bearer {self.token}')
            )
        return ClientCallContext(
            service_parameters=ServiceParametersFactory.create(updates)
        )

    async def send(
        self, skill: str, fields: dict[str, Any], *, bearer: bool = False
    ) -> dict[str, Any]:
        """One AAP skill call; returns the response's `data` object."""
        media = MEDIA[skill]
        request = SendMessageRequest(
            message=Message(
                message_id=str(uuid.uuid4()),
                role=Role.ROLE_USER,
                parts=[
                    new_data_part(
                        {'type': f'{skill}.request', **fields},
                        media_type=f'application/vnd.autoagent.{media}-request+json',
                    )
                ],
            ),
            configuration=SendMessageConfiguration(
                accepted_output_modes=[
                    f'application/vnd.autoagent.{media}-response+json'
                ]
            ),
        )
        events = []
        try:
            async for event in self.client.send_message(
                request, context=self.context(bearer=bearer)
            ):
                events.append(event)
        except A2AError as e:
            raise as_aap_error(e) from e
        expect(len(events) == 1, f'expected one reply, got {len(events)}')
        expect(
            events[0].HasField('message'),
            f'reply is not a Message: {MessageToDict(events[0])}',
        )
        reply = events[0].message
        expect(reply.role == Role.ROLE_AGENT, f'reply role {reply.role}')
        expect(bool(reply.message_id), 'reply has no messageId')
        expect(bool(reply.context_id), 'reply has no contextId')
        expect(len(reply.parts) >= 1, 'reply has no parts')
        want_media = f'application/vnd.autoagent.{media}-response+json'
        expect(
            reply.parts[0].media_type == want_media,
            f'reply mediaType {reply.parts[0].media_type!r}, want {want_media!r}',
        )
        payloads = get_data_parts(reply.parts)
        expect(len(payloads) >= 1, 'reply has no data part')
        payload = payloads[0]
        expect(
            isinstance(payload, dict)
            and payload.get('type') == f'{skill}.response',
            f'reply type {payload.get("type") if isinstance(payload, dict) else payload!r}',
        )
        expect(isinstance(payload.get('data'), dict), 'reply has no data object')
        return payload['data']

    async def expect_error(
        self,
        skill: str,
        fields: dict[str, Any],
        aap_code: str,
        rpc_code: int,
        *,
        bearer: bool = False,
    ) -> None:
        try:
            data = await self.send(skill, fields, bearer=bearer)
        except AapCallError as e:
            expect(
                e.aap_code == aap_code,
                f'error message {e.text!r} does not start with {aap_code}',
            )
            expect(
                e.rpc_code == rpc_code,
                f'JSON-RPC code {e.rpc_code}, want {rpc_code} ({e.text!r})',
            )
            return
        raise CheckFailed(f'expected {aap_code}, got a reply: {data}')

    # ------------------------------------------------------------ payloads
    def lead(self, tag: str, vehicle: dict[str, Any], **over: Any) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc)
        body: dict[str, Any] = {
            'customer': {
                'first_name': 'Ada',
                'last_name': 'Lovelace',
                'email': f'a2a-py-{tag}-{self.run_id}@example.com',
                'phone': '+13035550123',
                'preferred_contact': 'email',
            },
            'consent': {
                'granted_at': rfc3339(now - dt.timedelta(minutes=1)),
                'allowed_channels': ['email', 'phone'],
                'consent_text': 'I agree that Demo Feed Motors may contact me '
                'by email or phone about this vehicle.',
                'scope': ['lead_submission'],
            },
            'source_agent': {'name': AGENT_NAME},
            'vehicle_of_interest': vehicle,
            'message': 'Is this vehicle still available?',
            'idempotency_key': f'a2a-py-{tag}-{self.run_id}',
        }
        body.update(over)
        return body

    # ------------------------------------------------------------ checks
    async def card_resolves(self) -> None:
        url = f'{self.base}/aap/{DEALERSHIP}'
        self.card = await A2ACardResolver(self.http, url).get_agent_card()
        # One client for every call: the SDK picks the card's JSON-RPC 1.0
        # interface; streaming=False as well as the card's streaming false.
        config = ClientConfig(httpx_client=self.http, streaming=False)
        self.client = ClientFactory(config).create(self.card)
        iface = self.card.supported_interfaces
        expect(len(iface) >= 1, 'no supportedInterfaces')
        expect(iface[0].url == url, f'supportedInterfaces[0].url {iface[0].url!r}, want {url!r}')
        expect(
            iface[0].protocol_binding == 'JSONRPC' and iface[0].protocol_version == '1.0',
            f'interface {iface[0].protocol_binding} {iface[0].protocol_version}',
        )

    async def card_extension(self) -> None:
        exts = list(self.card.capabilities.extensions)
        expect(len(exts) >= 1, 'no capabilities.extensions')
        expect(exts[0].uri == AAP_URI, f'extensions[0].uri {exts[0].uri!r}')
        params = MessageToDict(exts[0].params)
        expect(params.get('version') == '1.3.0', f'params.version {params.get("version")!r}')
        skills = params.get('skills')
        expect(
            isinstance(skills, dict) and set(skills) == SKILL_IDS,
            f'params.skills keys {sorted(skills) if isinstance(skills, dict) else skills!r}',
        )

    async def card_streaming(self) -> None:
        expect(
            not self.card.capabilities.streaming,
            'capabilities.streaming is true (SDK clients would stream)',
        )

    async def card_skills(self) -> None:
        ids = [s.id for s in self.card.skills]
        expect(set(ids) == SKILL_IDS and len(ids) == 5, f'skill ids {ids}')

    async def card_security(self) -> None:
        schemes = self.card.security_schemes
        expect('bearer' in schemes, f'securitySchemes {list(schemes)}')
        http = schemes['bearer'].http_auth_security_scheme
        expect(http.scheme.lower() == 'bearer', f'bearer scheme {http.scheme!r}')
        lead = [s for s in self.card.skills if s.id == 'lead.submit'][0]
        names = [n for req in lead.security_requirements for n in req.schemes]
        expect('bearer' in names, f'lead.submit securityRequirements {names}')

    async def root_card(self) -> None:
        root = await A2ACardResolver(self.http, self.base).get_agent_card()
        expect(
            root.supported_interfaces
            and root.supported_interfaces[0].url == self.card.supported_interfaces[0].url,
            f'root card interface {[i.url for i in root.supported_interfaces]}',
        )
        expect(root.name == self.card.name, f'root card name {root.name!r} vs {self.card.name!r}')

    async def dealer_information(self) -> None:
        data = await self.send('dealer.information', {})
        expect(isinstance(data.get('name'), str) and data['name'], f'name {data.get("name")!r}')
        expect(len(data.get('rooftops') or []) >= 1, 'no rooftops')

    async def facets(self) -> None:
        data = await self.send('inventory.facets', {})
        expect(len(data.get('makes') or []) >= 1, f'makes {data.get("makes")!r}')

    async def search(self) -> list[dict[str, Any]]:
        data = await self.send(
            'inventory.search',
            {
                'filters': {'condition': ['used', 'cpo']},
                'pagination': {'skip': 0, 'limit': 5},
                'sort': {'field': 'price', 'order': 'asc'},
                'privacy': {'anonymous': True},
            },
        )
        total = data.get('total')
        vehicles = data.get('vehicles') or []
        self.vehicles = vehicles  # kept for the later checks even if this one fails
        expect(isinstance(total, (int, float)) and total >= 1, f'total {total!r}')
        expect(1 <= len(vehicles) <= 5, f'{len(vehicles)} vehicles on a page of 5')
        seen_unpriced = False
        last_price = None
        for i, v in enumerate(vehicles):
            expect(v.get('status') in LIVE_STATUSES, f'vehicles[{i}].status {v.get("status")!r}')
            expect(bool(v.get('updated_at')), f'vehicles[{i}] has no updated_at')
            expect(v.get('condition') in ('used', 'cpo'), f'vehicles[{i}].condition {v.get("condition")!r}')
            price = v.get('price')
            if price is None:
                seen_unpriced = True
                continue
            expect(not seen_unpriced, f'vehicles[{i}] has a price after an unpriced vehicle')
            expect(
                last_price is None or price >= last_price,
                f'prices not ascending: {last_price} then {price}',
            )
            last_price = price
        return vehicles

    async def search_integers(self) -> None:
        # The SDK sends these whole numbers as 5.0-style doubles; a server that
        # reads them as integers only would drop the limit or the price filter.
        priced = [v for v in self.vehicles if v.get('price') is not None]
        filters: dict[str, Any] = {'condition': ['used', 'cpo']}
        if priced:
            filters['price_max'] = int(priced[0]['price'])
        data = await self.send(
            'inventory.search',
            {'filters': filters, 'pagination': {'skip': 0, 'limit': 1}, 'sort': {'field': 'price', 'order': 'asc'}},
        )
        vehicles = data.get('vehicles') or []
        expect(len(vehicles) == 1, f'{len(vehicles)} vehicles for limit 1')
        expect(data.get('limit') in (None, 1), f'limit echoed as {data.get("limit")!r}')
        if priced:
            cap = filters['price_max']
            expect(
                all(v.get('price') is not None and v['price'] <= cap for v in vehicles),
                f'price_max {cap} not applied: {[v.get("price") for v in vehicles]}',
            )

    async def vehicle(self, first: dict[str, Any]) -> None:
        if first.get('vin'):
            key = {'vin': first['vin']}
        else:
            key = {'vehicle_id': first['vehicle_id']}
        data = await self.send('inventory.vehicle', key)
        for k, v in key.items():
            expect(data.get(k) == v, f'{k} {data.get(k)!r}, want {v!r}')
        expect(data.get('status') in LIVE_STATUSES, f'status {data.get("status")!r}')

    async def lead_received(self, vehicle: dict[str, Any]) -> str:
        # Kept byte for byte: the replay must send the very same payload.
        self.main_lead = self.lead('main', vehicle)
        data = await self.send('lead.submit', self.main_lead, bearer=True)
        expect(data.get('status') == 'received', f'status {data.get("status")!r}')
        expect(isinstance(data.get('lead_id'), str) and data['lead_id'], 'no lead_id')
        return data['lead_id']

    async def lead_replay(self, lead_id: str) -> None:
        data = await self.send('lead.submit', self.main_lead, bearer=True)
        expect(data.get('lead_id') == lead_id, f'lead_id {data.get("lead_id")!r}, want {lead_id!r}')
        expect(data.get('status') in ('received', 'duplicate'), f'status {data.get("status")!r}')

    async def lead_conflict(self) -> None:
        changed = {**self.main_lead, 'message': 'A different question about financing.'}
        await self.expect_error('lead.submit', changed, 'IDEMPOTENCY_CONFLICT', -32000, bearer=True)

    async def lead_consent(self, vehicle: dict[str, Any]) -> None:
        body = self.lead('sms', vehicle)
        body['customer']['preferred_contact'] = 'sms'
        body['consent']['allowed_channels'] = ['email']
        await self.expect_error('lead.submit', body, 'CONTACT_CONSENT_REQUIRED', -32000, bearer=True)

    async def lead_no_token(self, vehicle: dict[str, Any]) -> None:
        try:
            data = await self.send('lead.submit', self.lead('anon', vehicle), bearer=False)
        except AapCallError as e:
            # The 401 surfaces as A2AClientError("HTTP Error 401: ..."); a
            # validation error would mean the payload, not the token, failed.
            expect(
                e.aap_code not in ('SCHEMA_VALIDATION_FAILED', 'MISSING_REQUIRED_FIELD'),
                f'failed for another reason: {e.text}',
            )
            return
        raise CheckFailed(f'accepted without a token: {data}')

    async def lead_appointment(self, vehicle: dict[str, Any]) -> None:
        day = dt.datetime.now(dt.timezone.utc).date() + dt.timedelta(days=3)
        body = self.lead(
            'appt',
            vehicle,
            appointment={'appointment_type': 'test_drive', 'appointment_at': f'{day.isoformat()}T15:00:00Z'},
        )
        data = await self.send('lead.submit', body, bearer=True)
        appt = data.get('appointment')
        expect(isinstance(appt, dict), f'no appointment in {data}')
        expect(
            appt.get('status') in ('requested', 'proposed'),
            f'appointment.status {appt.get("status")!r}',
        )
        expect(bool(appt.get('appointment_id')), 'no appointment_id')

    async def unknown_field(self) -> None:
        await self.expect_error(
            'inventory.search',
            {'colour': 'red', 'privacy': {'anonymous': True}},
            'SCHEMA_VALIDATION_FAILED',
            -32602,
        )

    # ------------------------------------------------------------ run
    async def run(self) -> int:
        hooks = {'request': [self._trace_request]} if self.trace else {}
        async with httpx.AsyncClient(timeout=30.0, event_hooks=hooks) as http:
            self.http = http
            c = self.check
            await c('card: demo-feed card resolves at /aap/demo-feed/.well-known/agent-card.json', self.card_resolves())
            if self.client is None:
                print('Bail out! no demo-feed card, nothing else can run', flush=True)
            else:
                await c('card: AAP v1.3 extension (uri, params.version 1.3.0, params.skills)', self.card_extension())
                await c('card: capabilities.streaming is false', self.card_streaming())
                await c('card: the five AAP skill ids', self.card_skills())
                await c('card: bearer scheme, required by lead.submit', self.card_security())
                await c('card: root /.well-known/agent-card.json is the demo-feed card', self.root_card())
                await c('anonymous dealer.information: name and a rooftop', self.dealer_information())
                await c('anonymous inventory.facets: makes', self.facets())
                await c('anonymous inventory.search: used+cpo, live statuses, price asc', self.search())
                vehicles = self.vehicles
                await c(
                    'anonymous inventory.search: whole numbers honoured (limit 1, price_max)',
                    self.search_integers(),
                )
                if vehicles:
                    await c('anonymous inventory.vehicle: same vehicle as the search hit', self.vehicle(vehicles[0]))
                else:
                    await c('anonymous inventory.vehicle: same vehicle as the search hit', _fail('no search hit'))
                await c(
                    'inventory.vehicle of an absent VIN: VEHICLE_NOT_FOUND',
                    self.expect_error('inventory.vehicle', {'vin': ABSENT_VIN}, 'VEHICLE_NOT_FOUND', -32000),
                )
                with_vin = [v for v in vehicles if v.get('vin')]
                voi = {'vin': with_vin[0]['vin']} if with_vin else {'vin': '1HGCV1F30NA123456'}
                lead_id = await c('lead.submit with bearer: received, lead_id', self.lead_received(voi))
                if lead_id:
                    await c('lead.submit replay (same key, same payload): same lead_id', self.lead_replay(lead_id))
                    await c('lead.submit same key, other message: IDEMPOTENCY_CONFLICT', self.lead_conflict())
                else:
                    await c('lead.submit replay (same key, same payload): same lead_id', _fail('no first lead'))
                    await c('lead.submit same key, other message: IDEMPOTENCY_CONFLICT', _fail('no first lead'))
                await c('lead.submit sms outside allowed_channels: CONTACT_CONSENT_REQUIRED', self.lead_consent(voi))
                await c('lead.submit without a token: fails', self.lead_no_token(voi))
                await c('lead.submit test_drive appointment: requested or proposed', self.lead_appointment(voi))
                await c('unknown field in the data part: SCHEMA_VALIDATION_FAILED', self.unknown_field())
        print(f'a2a-python: {self.passed} passed, {self.failed} failed', flush=True)
        return 1 if self.failed or self.client is None else 0


async def _fail(detail: str) -> None:
    raise CheckFailed(detail)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[1] in ('-h', '--help'):
        print(__doc__.split('\n\n')[0], file=sys.stderr)
        print(f'usage: {argv[0]} BASE_URL [TOKEN]', file=sys.stderr)
        return 2
    token = argv[2] if len(argv) == 3 else os.environ.get('AAP_TOKEN', 'demo-token-group')
    trace = os.environ.get('A2A_TRACE', '') not in ('', '0')
    return asyncio.run(Runner(argv[1], token, trace).run())


if __name__ == '__main__':
    sys.exit(main(sys.argv))
