// Checks docs/openapi.yaml (docs/testing.md#the-openapi-document):
//   node replay.mjs check     the document is valid OpenAPI 3.1, every response example fits its schema,
//                             every request example belongs to a response example
//   node replay.mjs replay    the same, then every response example is replayed against a live server
//                             and the answer validated against the schema of its status
// replay reads its live server and fixtures from the environment:
//   GESSO_URL            http://127.0.0.1:PORT
//   GESSO_KEY            a funded account's key (the caller of every example)
//   GESSO_POOR_KEY       a key of an account without credits       (x-replay key: poor)
//   GESSO_LIMITED_KEY    a key limited to one request a second     (x-replay key: limited)
//   GESSO_TASKS          JSON {"succeeded", "video", "failed", "other"}: task ids of GESSO_KEY's account
//                        (other: of another account); queued tasks are created here (no worker runs)
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';

const documentPath = new URL('../../docs/openapi.yaml', import.meta.url);
const documentText = readFileSync(documentPath, 'utf8');
const doc = YAML.parse(documentText);
const failures = [];
const fail = (where, message) => failures.push(`${where}: ${message}`);

// JSON pointers into the document: '#/components/responses/X' → the object there.
const escape = (s) => s.replaceAll('~', '~0').replaceAll('/', '~1');
function at(pointer) {
  return pointer
    .slice(2)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node, key) => node?.[key], doc);
}
// An object that may be a $ref: [the object, its pointer].
function resolve(node, pointer) {
  while (node && node.$ref) {
    pointer = node.$ref;
    node = at(pointer);
  }
  return [node, pointer];
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi.json');
const validators = new Map();
function validate(schemaPointer, value) {
  if (!validators.has(schemaPointer)) {
    validators.set(schemaPointer, ajv.compile({ $ref: 'openapi.json' + schemaPointer }));
  }
  const v = validators.get(schemaPointer);
  return v(value) ? null : ajv.errorsText(v.errors, { dataVar: 'answer' });
}

// Every operation with its request examples (by name) and response examples.
const methods = ['get', 'post', 'put', 'patch', 'delete', 'head'];
function operations() {
  const list = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of methods.filter((m) => item[m])) {
      const op = item[method];
      const where = `${method.toUpperCase()} ${path}`;
      const pointer = `#/paths/${escape(path)}/${method}`;
      const requests = new Map(); // name → {params: [{param, value}], body, sources: [pointer]}
      const part = (name) => {
        if (!requests.has(name)) requests.set(name, { params: [], body: undefined, sources: [] });
        return requests.get(name);
      };
      (op.parameters ?? []).forEach((p, i) => {
        const [param, paramPointer] = resolve(p, `${pointer}/parameters/${i}`);
        for (const [name, example] of Object.entries(param.examples ?? {})) {
          part(name).params.push({ param, value: example.value, pointer: paramPointer });
          part(name).sources.push(`${paramPointer}/examples/${name}`);
        }
      });
      const bodyPointer = `${pointer}/requestBody/content/application~1json`;
      const json = op.requestBody?.content?.['application/json'];
      for (const [name, example] of Object.entries(json?.examples ?? {})) {
        part(name).body = example.value;
        part(name).sources.push(`${bodyPointer}/examples/${name}`);
      }
      const answers = [];
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        const [response, responsePointer] = resolve(r, `${pointer}/responses/${status}`);
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const schema = `${responsePointer}/content/${escape(type)}/schema`;
          for (const [name, example] of Object.entries(media.examples ?? {})) {
            answers.push({ name, status: Number(status), type, schema, example, response });
          }
        }
      }
      list.push({ where, path, method, op, pointer, requests, answers, bodyPointer });
    }
  }
  return list;
}

// Example values live only in the Example Objects of paths, which the replay sends: a schema's own
// `examples` or `example`, or one under `webhooks` (Gesso sends those; nothing replays them), would be an
// example nobody replays.
function schemaExamples(node, pointer, found = []) {
  if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      const here = `${pointer}/${escape(key)}`;
      const unreplayed = /\/schema(\/|$)|\/schemas\//.test(pointer) || pointer.startsWith('#/webhooks');
      if ((key === 'example' || key === 'examples') && unreplayed) found.push(here);
      else schemaExamples(value, here, found);
    }
  }
  return found;
}

async function checkDocument(ops) {
  for (const pointer of schemaExamples(doc, '#')) fail(pointer, 'an example the replay cannot send');
  const result = await new Validator().validate(structuredClone(doc));
  if (!result.valid) {
    fail('docs/openapi.yaml', `not valid OpenAPI 3.1: ${JSON.stringify(result.errors).slice(0, 2000)}`);
  }
  const used = new Map(); // request example source → used by a response example
  for (const { where, requests, answers, bodyPointer } of ops) {
    const names = new Set(answers.map((a) => a.name));
    for (const [name, request] of requests) {
      for (const source of request.sources) {
        used.set(source, (used.get(source) ?? false) || names.has(name));
      }
      // A request that succeeds must fit the schemas it is sent under.
      if (request.body !== undefined && answers.some((a) => a.name === name && a.status < 300)) {
        const error = validate(`${bodyPointer}/schema`, request.body);
        if (error) fail(`${where} request example ${name}`, error);
      }
    }
    for (const a of answers) {
      if (a.type.startsWith('application/json')) {
        const error = validate(a.schema, a.example.value);
        if (error) fail(`${where} ${a.status} example ${a.name}`, error);
      }
      if (a.example['x-replay']?.after && !names.has(a.example['x-replay'].after)) {
        fail(`${where} ${a.status} example ${a.name}`, `x-replay.after names no example of this operation`);
      }
    }
  }
  for (const [source, isUsed] of used) {
    if (!isUsed) fail(source, 'a request example that no response example of its operation replays');
  }
}

// ---- the live replay ----

const base = process.env.GESSO_URL;
const keys = {
  valid: process.env.GESSO_KEY,
  poor: process.env.GESSO_POOR_KEY,
  limited: process.env.GESSO_LIMITED_KEY,
};
const tasks = JSON.parse(process.env.GESSO_TASKS ?? '{}');

async function send(method, target, { key, headers = {}, body, contentType } = {}) {
  const h = { ...headers };
  if (key) h.Authorization = `Bearer ${key}`;
  if (body !== undefined) h['Content-Type'] = contentType ?? 'application/json';
  const res = await fetch(base + target, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes };
}

async function queuedTask() {
  const r = await send('POST', '/api/v1/tasks/create', {
    key: keys.valid,
    body: { model_id: 'vendor4-2', prompt: 'a queued task for the OpenAPI replay' },
  });
  if (r.status !== 200) throw new Error(`could not create a queued task: ${r.status} ${r.bytes}`);
  return JSON.parse(r.bytes).data.task_id;
}

async function taskFor(kind) {
  if (kind === 'queued') return queuedTask();
  if (!tasks[kind]) throw new Error(`GESSO_TASKS has no "${kind}" task`);
  return tasks[kind];
}

// The request of example `name` of `op`, as the replay sends it.
async function requestOf(op, name, replay) {
  const request = op.requests.get(name) ?? { params: [], body: undefined };
  const security = op.op.security ?? doc.security;
  const keyed = security.length > 0;
  let path = op.path;
  const query = new URLSearchParams();
  const headers = {};
  let taskId = null;
  if (replay.task && path.includes('{task_id}')) taskId = await taskFor(replay.task);
  for (const { param, value } of request.params) {
    if (param.in === 'path' && !(taskId && param.name === 'task_id')) path = path.replace(`{${param.name}}`, param.name === 'object' ? value : encodeURIComponent(value));
    if (param.in === 'query') query.append(param.name, String(value));
    if (param.in === 'header') headers[param.name] = String(value);
  }
  if (taskId) path = path.replace('{task_id}', taskId);
  if (replay.task && op.path.includes('{object}')) {
    // A media example: the live task's own signed link stands for the example's object, expires and sig.
    const task = await send('GET', `/api/v1/tasks/${await taskFor(replay.task)}`, { key: keys.valid });
    const link = new URL(JSON.parse(task.bytes).data.image_url);
    return { method: op.method.toUpperCase(), target: link.pathname + link.search, headers, body: undefined };
  }
  let key;
  if (keyed) {
    const kind = replay.key ?? 'valid';
    if (kind === 'unknown') key = keys.valid.slice(0, -6) + 'ZZZZZZ';
    else if (kind !== 'none') key = keys[kind];
  }
  const search = query.toString();
  const target = search ? `${path}?${search}` : path;
  return { method: op.method.toUpperCase(), target, key, headers, body: request.body, contentType: replay.content_type };
}

function checkHeader(where, name, header, value) {
  const [h] = resolve(header, '');
  if (value === null) {
    if (h.required) fail(where, `the answer lacks the required header ${name}`);
    return;
  }
  if (!h.schema) return;
  const typed = h.schema.type === 'integer' ? Number(value) : value;
  const v = ajv.compile(h.schema);
  if (!v(typed)) fail(where, `header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(v.errors)}`);
}

async function replayOne(op, answer) {
  const where = `${op.where} ${answer.status} example ${answer.name}`;
  const replay = answer.example['x-replay'] ?? {};
  if (replay.after) {
    const first = await requestOf(op, replay.after, {});
    await send(first.method, first.target, first);
  }
  const request = await requestOf(op, answer.name, replay);
  let r = await send(request.method, request.target, request);
  for (let i = 0; replay.key === 'limited' && r.status !== 429 && i < 5; ++i) {
    r = await send(request.method, request.target, request);
  }
  if (r.status !== answer.status) {
    fail(where, `answered ${r.status}, not ${answer.status}: ${r.bytes.toString().slice(0, 300)}`);
    return;
  }
  for (const [name, header] of Object.entries(answer.response.headers ?? {})) {
    checkHeader(where, name, header, r.headers.get(name));
  }
  for (const [name, value] of Object.entries(replay.headers ?? {})) {
    if (r.headers.get(name) !== value) fail(where, `header ${name} is ${r.headers.get(name)}, not ${value}`);
  }
  const type = r.headers.get('content-type') ?? '';
  if (!type.startsWith(answer.type)) {
    fail(where, `Content-Type ${type}, not ${answer.type}`);
    return;
  }
  if (!answer.type.startsWith('application/json')) {
    if (r.bytes.length === 0 || Number(r.headers.get('content-length')) !== r.bytes.length) {
      fail(where, `a ${answer.type} body of ${r.bytes.length} bytes (Content-Length ${r.headers.get('content-length')})`);
    }
    return;
  }
  let body;
  try {
    body = JSON.parse(r.bytes.toString('utf8'));
  } catch (e) {
    fail(where, `the answer is not JSON: ${e.message}`);
    return;
  }
  const error = validate(answer.schema, body);
  if (error) fail(where, error);
  const expected = answer.example.value;
  if (op.path === '/api/v1/openapi.json') {
    if (!isDeepStrictEqual(body, doc)) fail(where, 'the served document differs from docs/openapi.yaml');
  } else if ('code' in expected && (body.code !== expected.code || body.msg !== expected.msg)) {
    fail(where, `answered code ${body.code} msg ${JSON.stringify(body.msg)}; the example says ` +
      `code ${expected.code} msg ${JSON.stringify(expected.msg)}`);
  } else if (!('code' in expected) && !isDeepStrictEqual(body, expected)) {
    fail(where, `answered ${JSON.stringify(body)}; the example says ${JSON.stringify(expected)}`);
  }
}

const mode = process.argv[2];
if (mode !== 'check' && mode !== 'replay') {
  console.error('usage: node replay.mjs check|replay');
  process.exit(2);
}
const ops = operations();
await checkDocument(ops);
let replayed = 0;
if (mode === 'replay') {
  for (const op of ops) {
    for (const answer of op.answers) {
      try {
        await replayOne(op, answer);
      } catch (e) {
        fail(`${op.where} ${answer.status} example ${answer.name}`, e.stack);
      }
      ++replayed;
    }
  }
}
const examples = ops.reduce((n, op) => n + op.answers.length, 0);
console.log(`docs/openapi.yaml: ${ops.length} operations, ${examples} response examples checked` +
  (mode === 'replay' ? `, ${replayed} replayed against ${base}` : ''));
for (const f of failures) console.error(`FAIL ${f}`);
process.exit(failures.length ? 1 : 0);
