#!/usr/bin/env node
// A2A/AAP v1.3 interop smoke test of dms-bridge with the official JS SDK.
//
// Talks to a running `dms-bridge demo` the way a third-party buyer agent would:
// through @a2a-js/sdk (npm, pinned in package.json / package-lock.json) only,
// with A2A v1.0 JSON-RPC `SendMessage` and AAP v1.3 data parts.
//
// Checks (one line each, `ok - name` or `FAIL - name: detail`):
//   a. the demo-feed agent card, resolved by the SDK's DefaultAgentCardResolver
//      at {base}/aap/demo-feed/.well-known/agent-card.json: the AAP v1.3
//      extension (uri, params.version 1.3.0), streaming off, the five skill
//      ids, the JSON-RPC interface, the bearer scheme on lead.submit; and the
//      root {base}/.well-known/agent-card.json is the same (demo-feed) card;
//   b. anonymous calls (no Authorization) on demo-feed: dealer.information,
//      inventory.facets, inventory.search (used+cpo, sorted by price asc),
//      a search whose limit 1 and price_max must be honoured, inventory.vehicle
//      of the first hit;
//   c. inventory.vehicle of a VIN not in stock -> VEHICLE_NOT_FOUND;
//   d. lead.submit with the bearer -> received + lead_id; the same key and
//      payload again -> the same lead_id; the same key, another message ->
//      IDEMPOTENCY_CONFLICT;
//   e. preferred_contact sms outside allowed_channels -> CONTACT_CONSENT_REQUIRED;
//   f. lead.submit without a token fails (HTTP 401 raised by the SDK);
//   g. a test-drive appointment is `requested` or `proposed`, never `confirmed`;
//   h. an unknown field in the data part -> SCHEMA_VALIDATION_FAILED.
// Every expected error is checked three ways, as the SDK keeps them all: the
// message starts with the AAP code, the JSON-RPC code (-32000 / -32602), and
// error.data is the aap.error object with that code.
//
// Ends with `a2a-js: N passed, M failed`; exits 1 on any failure.
//
// Run (CI does the same; Node >= 20):
//   npm ci --prefix tests/a2a/js
//   node tests/a2a/js/aap_client.mjs http://127.0.0.1:8080 [TOKEN]
// The token defaults to $AAP_TOKEN, else `demo-token-group`. A2A_TRACE=1 prints
// every JSON-RPC request body the SDK sends to stderr.
//
// SDK facts this script relies on (@a2a-js/sdk 1.3.0):
//   * The resolver joins its base URL and the relative path
//     `.well-known/agent-card.json` with `new URL(path, base)`, so the base
//     must end in `/` (without it, `/aap/demo-feed` loses its last segment).
//   * The client picks the card's JSON-RPC interface (protocolVersion 1.0),
//     sends `A2A-Version: 1.0` itself, and falls back from streaming when the
//     card says streaming is false.
//   * Nothing in the SDK attaches a bearer from the card on its own; it goes
//     per call as a service parameter (sent as the Authorization header).
//   * JSON-RPC errors are thrown as typed errors (`-32602` ->
//     RequestMalformedError, `-32000` -> JsonRpcTransportError) that keep
//     `envelopeCode` and `data`. An HTTP 401 with a JSON-RPC body is thrown
//     the same way, with any other body as a plain Error.

import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';

const AAP_URI = 'https://autoagentprotocol.org/extensions/aap/v1.3';
const DEALERSHIP = 'demo-feed';
const SKILL_IDS = [
  'dealer.information',
  'inventory.facets',
  'inventory.search',
  'inventory.vehicle',
  'lead.submit',
];
// Skill id -> media type stem (inventory.vehicle is `vehicle-detail`).
const MEDIA = {
  'dealer.information': 'dealer-information',
  'inventory.facets': 'inventory-facets',
  'inventory.search': 'inventory-search',
  'inventory.vehicle': 'vehicle-detail',
  'lead.submit': 'lead-submit',
};
const LIVE_STATUSES = ['available', 'intransit', 'pending'];
// Valid check digit, not in any demo inventory.
const ABSENT_VIN = '1HGCM82633A004352';
const AGENT_NAME = 'a2a-js-smoke';
const TIMEOUT_MS = 30_000;

class CheckFailed extends Error {}

function expect(cond, detail) {
  if (!cond) throw new CheckFailed(detail);
}

const fail = async (detail) => {
  throw new CheckFailed(detail);
};

function rfc3339(date) {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const sameSet = (a, b) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

class Runner {
  constructor(base, token, trace) {
    this.base = base.replace(/\/+$/, '');
    this.token = token;
    this.trace = trace;
    this.passed = 0;
    this.failed = 0;
    this.vehicles = [];
    this.runId = randomUUID().replaceAll('-', '').slice(0, 12);
    const fetchImpl = trace ? this.tracingFetch : undefined;
    this.factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        preferredTransports: ['JSONRPC'],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
  }

  // ---------------------------------------------------------------- plumbing
  async tracingFetch(input, init) {
    if (init?.method === 'POST') process.stderr.write(`> ${input} ${init.body}\n`);
    return fetch(input, init);
  }

  async check(name, fn) {
    try {
      const result = await fn();
      this.passed += 1;
      console.log(`ok - ${name}`);
      return result;
    } catch (e) {
      this.failed += 1;
      const detail = e instanceof CheckFailed ? e.message : `${e?.name ?? 'Error'}: ${e?.message ?? e}`;
      console.log(`FAIL - ${name}: ${detail}`);
      return undefined;
    }
  }

  options({ bearer }) {
    const updates = [withA2AExtensions(AAP_URI)];
    if (bearer) updates.push((p) => { p.Authorization = `Bearer ${this.token}`; });
    return {
      serviceParameters: ServiceParameters.create(...updates),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    };
  }

  /** One AAP skill call; returns the response's `data` object. */
  async send(skill, fields, { bearer = false } = {}) {
    const media = MEDIA[skill];
    const request = {
      message: {
        messageId: randomUUID(),
        role: Role.ROLE_USER,
        parts: [
          {
            content: { $case: 'data', value: { type: `${skill}.request`, ...fields } },
            mediaType: `application/vnd.autoagent.${media}-request+json`,
          },
        ],
      },
      configuration: {
        acceptedOutputModes: [`application/vnd.autoagent.${media}-response+json`],
      },
    };
    const reply = await this.client.sendMessage(request, this.options({ bearer }));
    expect(reply && 'messageId' in reply, `reply is not a Message: ${JSON.stringify(reply)}`);
    expect(reply.role === Role.ROLE_AGENT, `reply role ${reply.role}`);
    expect(reply.messageId, 'reply has no messageId');
    expect(reply.contextId, 'reply has no contextId');
    expect(reply.parts.length >= 1, 'reply has no parts');
    const part = reply.parts[0];
    const wantMedia = `application/vnd.autoagent.${media}-response+json`;
    expect(part.mediaType === wantMedia, `reply mediaType ${JSON.stringify(part.mediaType)}, want ${wantMedia}`);
    expect(part.content?.$case === 'data', `reply part is ${part.content?.$case}, not data`);
    const payload = part.content.value;
    expect(payload?.type === `${skill}.response`, `reply type ${JSON.stringify(payload?.type)}`);
    expect(payload.data && typeof payload.data === 'object', 'reply has no data object');
    return payload.data;
  }

  async expectError(skill, fields, aapCode, rpcCode, { bearer = false } = {}) {
    let data;
    try {
      data = await this.send(skill, fields, { bearer });
    } catch (e) {
      if (e instanceof CheckFailed) throw e;
      const message = String(e?.message ?? '');
      expect(message.startsWith(`${aapCode}:`), `error message ${JSON.stringify(message)} does not start with ${aapCode}`);
      expect(e.envelopeCode === rpcCode, `JSON-RPC code ${e.envelopeCode}, want ${rpcCode} (${e.name})`);
      expect(e.data?.type === 'aap.error', `error.data ${JSON.stringify(e.data)} is not an aap.error`);
      expect(e.data.code === aapCode, `error.data.code ${JSON.stringify(e.data.code)}, want ${aapCode}`);
      expect(typeof e.data.retryable === 'boolean' && e.data.error_id && e.data.created_at,
        `error.data lacks retryable/error_id/created_at: ${JSON.stringify(e.data)}`);
      return;
    }
    throw new CheckFailed(`expected ${aapCode}, got a reply: ${JSON.stringify(data)}`);
  }

  // ---------------------------------------------------------------- payloads
  lead(tag, vehicle, over = {}) {
    return {
      customer: {
        first_name: 'Grace',
        last_name: 'Hopper',
        email: `a2a-js-${tag}-${this.runId}@example.com`,
        phone: '+13035550123',
        preferred_contact: 'email',
      },
      consent: {
        granted_at: rfc3339(new Date(Date.now() - 60_000)),
        allowed_channels: ['email', 'phone'],
        consent_text: 'I agree that Demo Feed Motors may contact me by email or phone about this vehicle.',
        scope: ['lead_submission'],
      },
      source_agent: { name: AGENT_NAME },
      vehicle_of_interest: vehicle,
      message: 'Is this vehicle still available?',
      idempotency_key: `a2a-js-${tag}-${this.runId}`,
      ...over,
    };
  }

  // ---------------------------------------------------------------- checks
  async cardResolves() {
    const url = `${this.base}/aap/${DEALERSHIP}`;
    // Trailing slash: the resolver resolves `.well-known/agent-card.json` against it.
    this.client = await this.factory.createFromUrl(`${url}/`);
    this.card = await this.client.getAgentCard();
    const iface = this.card.supportedInterfaces ?? [];
    expect(iface.length >= 1, 'no supportedInterfaces');
    expect(iface[0].url === url, `supportedInterfaces[0].url ${JSON.stringify(iface[0].url)}, want ${url}`);
    expect(iface[0].protocolBinding === 'JSONRPC' && iface[0].protocolVersion === '1.0',
      `interface ${iface[0].protocolBinding} ${iface[0].protocolVersion}`);
    expect(this.client.transport.protocolName === 'JSONRPC', `transport ${this.client.transport.protocolName}`);
  }

  async cardExtension() {
    const exts = this.card.capabilities?.extensions ?? [];
    expect(exts.length >= 1, 'no capabilities.extensions');
    expect(exts[0].uri === AAP_URI, `extensions[0].uri ${JSON.stringify(exts[0].uri)}`);
    const params = exts[0].params ?? {};
    expect(params.version === '1.3.0', `params.version ${JSON.stringify(params.version)}`);
    const skills = params.skills;
    expect(skills && typeof skills === 'object' && sameSet(Object.keys(skills), SKILL_IDS),
      `params.skills keys ${JSON.stringify(skills && Object.keys(skills))}`);
  }

  async cardStreaming() {
    expect(!this.card.capabilities?.streaming, 'capabilities.streaming is true (SDK clients would stream)');
  }

  async cardSkills() {
    const ids = (this.card.skills ?? []).map((s) => s.id);
    expect(sameSet(ids, SKILL_IDS), `skill ids ${JSON.stringify(ids)}`);
  }

  async cardSecurity() {
    const bearer = this.card.securitySchemes?.bearer;
    expect(bearer, `securitySchemes ${JSON.stringify(Object.keys(this.card.securitySchemes ?? {}))}`);
    // Proto-shaped card: the oneof is `{scheme: {$case, value}}`.
    const http = bearer.scheme?.$case === 'httpAuthSecurityScheme' ? bearer.scheme.value : bearer.httpAuthSecurityScheme;
    expect(String(http?.scheme ?? '').toLowerCase() === 'bearer', `bearer scheme ${JSON.stringify(bearer)}`);
    const lead = (this.card.skills ?? []).find((s) => s.id === 'lead.submit');
    const names = (lead?.securityRequirements ?? []).flatMap((r) => Object.keys(r.schemes ?? {}));
    expect(names.includes('bearer'), `lead.submit securityRequirements ${JSON.stringify(lead?.securityRequirements)}`);
  }

  async rootCard() {
    const resolver = new DefaultAgentCardResolver({ fetchImpl: this.trace ? this.tracingFetch : undefined });
    const root = await resolver.resolve(`${this.base}/`);
    const urls = (root.supportedInterfaces ?? []).map((i) => i.url);
    expect(urls[0] === this.card.supportedInterfaces[0].url, `root card interfaces ${JSON.stringify(urls)}`);
    expect(root.name === this.card.name, `root card name ${JSON.stringify(root.name)} vs ${JSON.stringify(this.card.name)}`);
  }

  async dealerInformation() {
    const data = await this.send('dealer.information', {});
    expect(typeof data.name === 'string' && data.name, `name ${JSON.stringify(data.name)}`);
    expect((data.rooftops ?? []).length >= 1, 'no rooftops');
  }

  async facets() {
    const data = await this.send('inventory.facets', {});
    expect((data.makes ?? []).length >= 1, `makes ${JSON.stringify(data.makes)}`);
  }

  async search() {
    const data = await this.send('inventory.search', {
      filters: { condition: ['used', 'cpo'] },
      pagination: { skip: 0, limit: 5 },
      sort: { field: 'price', order: 'asc' },
      privacy: { anonymous: true },
    });
    const vehicles = data.vehicles ?? [];
    this.vehicles = vehicles; // kept for the later checks even if this one fails
    expect(Number.isInteger(data.total) && data.total >= 1, `total ${JSON.stringify(data.total)}`);
    expect(vehicles.length >= 1 && vehicles.length <= 5, `${vehicles.length} vehicles on a page of 5`);
    let seenUnpriced = false;
    let lastPrice;
    vehicles.forEach((v, i) => {
      expect(LIVE_STATUSES.includes(v.status), `vehicles[${i}].status ${JSON.stringify(v.status)}`);
      expect(v.updated_at, `vehicles[${i}] has no updated_at`);
      expect(['used', 'cpo'].includes(v.condition), `vehicles[${i}].condition ${JSON.stringify(v.condition)}`);
      if (v.price === undefined || v.price === null) {
        seenUnpriced = true;
        return;
      }
      expect(!seenUnpriced, `vehicles[${i}] has a price after an unpriced vehicle`);
      expect(lastPrice === undefined || v.price >= lastPrice, `prices not ascending: ${lastPrice} then ${v.price}`);
      lastPrice = v.price;
    });
    return vehicles;
  }

  async searchIntegers() {
    // Whole numbers on the wire (the Python SDK sends the same as 1.0-style
    // doubles): the limit and the price filter must both be applied.
    const priced = this.vehicles.filter((v) => v.price !== undefined && v.price !== null);
    const filters = { condition: ['used', 'cpo'] };
    if (priced.length) filters.price_max = Math.trunc(priced[0].price);
    const data = await this.send('inventory.search', {
      filters,
      pagination: { skip: 0, limit: 1 },
      sort: { field: 'price', order: 'asc' },
    });
    const vehicles = data.vehicles ?? [];
    expect(vehicles.length === 1, `${vehicles.length} vehicles for limit 1`);
    expect(data.limit === undefined || data.limit === 1, `limit echoed as ${JSON.stringify(data.limit)}`);
    if (priced.length) {
      expect(vehicles.every((v) => typeof v.price === 'number' && v.price <= filters.price_max),
        `price_max ${filters.price_max} not applied: ${JSON.stringify(vehicles.map((v) => v.price))}`);
    }
  }

  async vehicle(first) {
    const key = first.vin ? { vin: first.vin } : { vehicle_id: first.vehicle_id };
    const data = await this.send('inventory.vehicle', key);
    for (const [k, v] of Object.entries(key)) {
      expect(data[k] === v, `${k} ${JSON.stringify(data[k])}, want ${v}`);
    }
    expect(LIVE_STATUSES.includes(data.status), `status ${JSON.stringify(data.status)}`);
  }

  async leadReceived(vehicle) {
    // Kept as is: the replay must send the very same payload.
    this.mainLead = this.lead('main', vehicle);
    const data = await this.send('lead.submit', this.mainLead, { bearer: true });
    expect(data.status === 'received', `status ${JSON.stringify(data.status)}`);
    expect(typeof data.lead_id === 'string' && data.lead_id, 'no lead_id');
    return data.lead_id;
  }

  async leadReplay(leadId) {
    const data = await this.send('lead.submit', this.mainLead, { bearer: true });
    expect(data.lead_id === leadId, `lead_id ${JSON.stringify(data.lead_id)}, want ${leadId}`);
    expect(['received', 'duplicate'].includes(data.status), `status ${JSON.stringify(data.status)}`);
  }

  async leadConflict() {
    const changed = { ...this.mainLead, message: 'A different question about financing.' };
    await this.expectError('lead.submit', changed, 'IDEMPOTENCY_CONFLICT', -32000, { bearer: true });
  }

  async leadConsent(vehicle) {
    const body = this.lead('sms', vehicle);
    body.customer.preferred_contact = 'sms';
    body.consent.allowed_channels = ['email'];
    await this.expectError('lead.submit', body, 'CONTACT_CONSENT_REQUIRED', -32000, { bearer: true });
  }

  async leadNoToken(vehicle) {
    let data;
    try {
      data = await this.send('lead.submit', this.lead('anon', vehicle), { bearer: false });
    } catch (e) {
      if (e instanceof CheckFailed) throw e;
      // A validation error would mean the payload, not the token, failed.
      const code = e?.data?.code ?? String(e?.message ?? '').split(':')[0];
      expect(!['SCHEMA_VALIDATION_FAILED', 'MISSING_REQUIRED_FIELD'].includes(code),
        `failed for another reason: ${e?.message}`);
      return;
    }
    throw new CheckFailed(`accepted without a token: ${JSON.stringify(data)}`);
  }

  async leadAppointment(vehicle) {
    const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const body = this.lead('appt', vehicle, {
      appointment: { appointment_type: 'test_drive', appointment_at: `${day}T15:00:00Z` },
    });
    const data = await this.send('lead.submit', body, { bearer: true });
    const appt = data.appointment;
    expect(appt && typeof appt === 'object', `no appointment in ${JSON.stringify(data)}`);
    expect(['requested', 'proposed'].includes(appt.status), `appointment.status ${JSON.stringify(appt.status)}`);
    expect(appt.appointment_id, 'no appointment_id');
  }

  async unknownField() {
    await this.expectError('inventory.search', { colour: 'red', privacy: { anonymous: true } },
      'SCHEMA_VALIDATION_FAILED', -32602);
  }

  // ---------------------------------------------------------------- run
  async run() {
    const c = (name, fn) => this.check(name, fn);
    await c('card: demo-feed card resolves at /aap/demo-feed/.well-known/agent-card.json', () => this.cardResolves());
    if (!this.card) {
      console.log('Bail out! no demo-feed card, nothing else can run');
    } else {
      await c('card: AAP v1.3 extension (uri, params.version 1.3.0, params.skills)', () => this.cardExtension());
      await c('card: capabilities.streaming is false', () => this.cardStreaming());
      await c('card: the five AAP skill ids', () => this.cardSkills());
      await c('card: bearer scheme, required by lead.submit', () => this.cardSecurity());
      await c('card: root /.well-known/agent-card.json is the demo-feed card', () => this.rootCard());
      await c('anonymous dealer.information: name and a rooftop', () => this.dealerInformation());
      await c('anonymous inventory.facets: makes', () => this.facets());
      await c('anonymous inventory.search: used+cpo, live statuses, price asc', () => this.search());
      const vehicles = this.vehicles;
      await c('anonymous inventory.search: whole numbers honoured (limit 1, price_max)', () => this.searchIntegers());
      await c('anonymous inventory.vehicle: same vehicle as the search hit',
        () => (vehicles.length ? this.vehicle(vehicles[0]) : fail('no search hit')));
      await c('inventory.vehicle of an absent VIN: VEHICLE_NOT_FOUND',
        () => this.expectError('inventory.vehicle', { vin: ABSENT_VIN }, 'VEHICLE_NOT_FOUND', -32000));
      const withVin = vehicles.filter((v) => v.vin);
      const voi = { vin: withVin.length ? withVin[0].vin : '1HGCV1F30NA123456' };
      const leadId = await c('lead.submit with bearer: received, lead_id', () => this.leadReceived(voi));
      await c('lead.submit replay (same key, same payload): same lead_id',
        () => (leadId ? this.leadReplay(leadId) : fail('no first lead')));
      await c('lead.submit same key, other message: IDEMPOTENCY_CONFLICT',
        () => (leadId ? this.leadConflict() : fail('no first lead')));
      await c('lead.submit sms outside allowed_channels: CONTACT_CONSENT_REQUIRED', () => this.leadConsent(voi));
      await c('lead.submit without a token: fails', () => this.leadNoToken(voi));
      await c('lead.submit test_drive appointment: requested or proposed', () => this.leadAppointment(voi));
      await c('unknown field in the data part: SCHEMA_VALIDATION_FAILED', () => this.unknownField());
    }
    console.log(`a2a-js: ${this.passed} passed, ${this.failed} failed`);
    return this.failed || !this.card ? 1 : 0;
  }
}

const args = process.argv.slice(2);
if (args.length < 1 || args.length > 2 || args[0] === '-h' || args[0] === '--help') {
  console.error('usage: node aap_client.mjs BASE_URL [TOKEN]   (e.g. http://127.0.0.1:8080)');
  process.exit(2);
}
const token = args[1] ?? process.env.AAP_TOKEN ?? 'demo-token-group';
const trace = !['', '0', undefined].includes(process.env.A2A_TRACE);
process.exitCode = await new Runner(args[0], token, trace).run();
