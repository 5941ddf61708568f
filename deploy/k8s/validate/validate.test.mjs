// The validator's own tests: it passes the real overlays and fails, naming the fault, on every kind of
// broken manifest it exists to catch. Run with `node --test` (deploy/k8s/validate/run.sh).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";
import { policyViolations, schemaViolations, unknownFieldViolations } from "./checks.mjs";
import { render, strategicMerge } from "./render.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const prod = render(join(here, "..", "overlays", "prod-keda")).objects;

async function violationsOf(mutate) {
  const objects = structuredClone(prod);
  mutate(objects);
  return [
    ...(await schemaViolations(objects)),
    ...unknownFieldViolations(objects),
    ...policyViolations(objects),
  ];
}

const find = (objects, kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const server = (objects) => find(objects, "Deployment", "gesso-server").spec.template.spec;
const worker = (objects) => find(objects, "Deployment", "gesso-worker").spec.template.spec;

test("the real overlays pass", async () => {
  assert.deepEqual(await violationsOf(() => {}), []);
});

const cases = [
  ["a missing readiness probe", (o) => delete server(o).containers[0].readinessProbe, /server: readinessProbe missing/],
  ["a misspelt field", (o) => (server(o).containers[0].readinesProbe = {}), /readinesProbe: unknown field/],
  ["an unknown field deep down", (o) => (worker(o).containers[0].resources.limits2 = {}), /resources\.limits2: unknown field/],
  ["an unpinned image", (o) => (worker(o).containers[0].image = "registry.example.com/gesso:latest"), /not pinned/],
  ["an image without a tag", (o) => (server(o).initContainers[0].image = "gesso"), /container migrate: image gesso is not pinned/],
  ["root", (o) => (worker(o).securityContext.runAsNonRoot = false), /must run as non-root/],
  ["a writable root filesystem", (o) => (server(o).containers[0].securityContext.readOnlyRootFilesystem = false), /readOnlyRootFilesystem/],
  ["kept capabilities", (o) => (server(o).containers[0].securityContext.capabilities.drop = []), /drop ALL/],
  ["privilege escalation", (o) => delete worker(o).containers[0].securityContext.allowPrivilegeEscalation, /allowPrivilegeEscalation/],
  ["no seccomp profile", (o) => delete server(o).securityContext.seccompProfile, /seccompProfile/],
  ["missing limits", (o) => delete worker(o).containers[0].resources.limits, /resources\.limits\.cpu missing/],
  ["liveness on the database", (o) => (server(o).containers[0].livenessProbe.httpGet.path = "/readyz"), /livenessProbe must use \/healthz/],
  ["a grace shorter than the drain", (o) => (server(o).terminationGracePeriodSeconds = 20), /terminationGracePeriodSeconds 20 < drain grace 10 s/],
  ["readiness slower than the drain", (o) => (server(o).containers[0].readinessProbe.periodSeconds = 30), /readiness notices a drain after 30 s/],
  ["one server", (o) => (find(o, "Deployment", "gesso-server").spec.replicas = 1), /at least 2 replicas/],
  ["unavailable during rollouts", (o) => (find(o, "Deployment", "gesso-server").spec.strategy.rollingUpdate.maxUnavailable = 1), /maxUnavailable 0/],
  ["a mounted token", (o) => (worker(o).automountServiceAccountToken = true), /automountServiceAccountToken/],
  ["media on one node", (o) => (find(o, "PersistentVolumeClaim", "gesso-media").spec.accessModes = ["ReadWriteOnce"]), /ReadWriteMany/],
  ["no disruption budget", (o) => o.splice(o.findIndex((x) => x.kind === "PodDisruptionBudget"), 1), /no PodDisruptionBudget selects/],
  ["a wrong type", (o) => (find(o, "Deployment", "gesso-server").spec.replicas = "two"), /schema/],
  ["a wrong type in the KEDA scaler", (o) => (find(o, "ScaledObject", "gesso-worker").spec.minReplicaCount = "two"), /ScaledObject gesso\/gesso-worker: schema/],
  ["an unknown kind", (o) => o.push({ apiVersion: "v1", kind: "Bogus", metadata: { name: "x" } }), /no schema for v1 Bogus/],
];
for (const [name, mutate, expected] of cases) {
  test(`refuses ${name}`, async () => {
    const found = await violationsOf(mutate);
    assert.ok(found.some((v) => expected.test(v)), `expected ${expected} among:\n${found.join("\n")}`);
  });
}

test("strategic merges follow Kubernetes' list keys", () => {
  const target = { spec: { containers: [{ name: "a", image: "x", env: [{ name: "K", value: "1" }] }], tls: [1] } };
  strategicMerge(target, { spec: { containers: [{ name: "a", env: [{ name: "L", value: "2" }] }, { name: "b" }], tls: [2] } });
  assert.deepEqual(target, {
    spec: {
      containers: [{ name: "a", image: "x", env: [{ name: "K", value: "1" }, { name: "L", value: "2" }] }, { name: "b" }],
      tls: [2],
    },
  });
  strategicMerge(target, { spec: { containers: [{ name: "a", image: null }] } });
  assert.equal(target.spec.containers[0].image, undefined);
});

test("the command line fails on a broken overlay, naming every fault", () => {
  const run = spawnSync(process.execPath, [join(here, "validate.mjs"), join(here, "fixtures", "broken")], { encoding: "utf8" });
  assert.equal(run.status, 1, run.stdout + run.stderr);
  for (const expected of [
    /image registry\.example\.com\/gesso:latest is not pinned/,
    /container server: readinessProbe missing/,
    /livenesProbe: unknown field/,
    /terminationGracePeriodSeconds 5/,
    /container worker: must run as non-root/,
    /container worker: livenessProbe must use \/healthz/,
  ]) {
    assert.match(run.stdout, expected);
  }
});

test("the command line passes the real overlays", () => {
  const run = spawnSync(process.execPath, [join(here, "validate.mjs")], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /overlays\/prod: \d+ objects .*, 0 violations/);
});
