// Checks rendered Kubernetes objects: the Kubernetes schemas (kubernetes-models, ajv), no field
// unknown to the Kubernetes API (the API's own models in @kubernetes/client-node), and Gesso's policy
// (docs/deploy.md#validation). Every function returns a list of violations, empty when all is well.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const apiModels = require("@kubernetes/client-node/dist/gen/model/models.js");

function modelModule(apiVersion) {
  if (apiVersion.startsWith("keda.sh/")) {
    return `@kubernetes-models/keda/${apiVersion}`;
  }
  return `kubernetes-models/${apiVersion}`;
}

function where(o) {
  return `${o.kind ?? "?"} ${o.metadata?.namespace ? o.metadata.namespace + "/" : ""}${o.metadata?.name ?? "?"}`;
}

/// Validates each object against its Kubernetes (or KEDA) schema.
export async function schemaViolations(objects) {
  const out = [];
  for (const o of objects) {
    let Model;
    try {
      Model = (await import(modelModule(o.apiVersion ?? "")))[o.kind];
    } catch {
      Model = undefined;
    }
    if (!Model) {
      out.push(`${where(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(structuredClone(o)).validate();
    } catch (e) {
      out.push(`${where(o)}: schema: ${e.message.split("\n")[0]}`);
    }
  }
  return out;
}

function walkUnknown(value, typeName, path, out) {
  if (value === null || value === undefined) {
    return;
  }
  const list = /^Array<(.+)>$/.exec(typeName);
  if (list) {
    if (Array.isArray(value)) {
      value.forEach((v, i) => walkUnknown(v, list[1], `${path}[${i}]`, out));
    }
    return;
  }
  const Model = apiModels[typeName];
  if (!Model || typeof Model.getAttributeTypeMap !== "function" || typeof value !== "object" || Array.isArray(value)) {
    return;  // a primitive, a map of strings, IntOrString, a quantity
  }
  const known = new Map(Model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [key, v] of Object.entries(value)) {
    if (!known.has(key)) {
      out.push(`${path}.${key}: unknown field`);
    } else {
      walkUnknown(v, known.get(key), `${path}.${key}`, out);
    }
  }
}

/// Fields the Kubernetes API does not know (a typo such as `readinesProbe` is silently dropped by
/// the API server otherwise). Custom resources (KEDA) are checked by their schema only.
export function unknownFieldViolations(objects) {
  const out = [];
  for (const o of objects) {
    const version = (o.apiVersion ?? "").split("/").pop();
    const typeName = version.charAt(0).toUpperCase() + version.slice(1) + o.kind;
    if (!apiModels[typeName]) {
      continue;
    }
    const found = [];
    walkUnknown(o, typeName, "", found);
    out.push(...found.map((f) => `${where(o)}: ${f.slice(1)}`));
  }
  return out;
}

const workloads = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"]);

function podSpecOf(o) {
  return o.kind === "CronJob" ? o.spec?.jobTemplate?.spec?.template?.spec : o.spec?.template?.spec;
}

function pinned(image) {
  if (typeof image !== "string") {
    return false;
  }
  if (image.includes("@sha256:")) {
    return true;
  }
  const base = image.slice(image.lastIndexOf("/") + 1);
  const tag = base.includes(":") ? base.slice(base.indexOf(":") + 1) : "";
  return tag !== "" && tag !== "latest";
}

function seconds(ms) {
  return Number(ms) / 1000;
}

/// Gesso's own rules for every rendered overlay.
export function policyViolations(objects, { requireSharedMedia = true } = {}) {
  const out = [];
  const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata?.name === "gesso-config")?.data ?? {};
  for (const o of objects.filter((x) => workloads.has(x.kind))) {
    const spec = podSpecOf(o);
    if (!spec) {
      out.push(`${where(o)}: no pod template`);
      continue;
    }
    const runsToCompletion = o.kind === "Job" || o.kind === "CronJob";
    const pod = spec.securityContext ?? {};
    if (spec.automountServiceAccountToken !== false) {
      out.push(`${where(o)}: automountServiceAccountToken must be false`);
    }
    const containers = [
      ...(spec.initContainers ?? []).map((c) => [c, true]),
      ...(spec.containers ?? []).map((c) => [c, runsToCompletion]),
    ];
    for (const [c, oneShot] of containers) {
      const at = `${where(o)} container ${c.name}`;
      const sc = c.securityContext ?? {};
      if (!pinned(c.image)) {
        out.push(`${at}: image ${c.image} is not pinned (a tag other than latest, or a digest)`);
      }
      for (const kind of ["requests", "limits"]) {
        for (const resource of ["cpu", "memory"]) {
          if (!c.resources?.[kind]?.[resource]) {
            out.push(`${at}: resources.${kind}.${resource} missing`);
          }
        }
      }
      if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) {
        out.push(`${at}: must run as non-root (runAsNonRoot: true)`);
      }
      if ((sc.runAsUser ?? pod.runAsUser) === 0) {
        out.push(`${at}: runs as user 0`);
      }
      if (sc.allowPrivilegeEscalation !== false) {
        out.push(`${at}: allowPrivilegeEscalation must be false`);
      }
      if (sc.readOnlyRootFilesystem !== true) {
        out.push(`${at}: readOnlyRootFilesystem must be true`);
      }
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) {
        out.push(`${at}: capabilities must drop ALL`);
      }
      if (sc.privileged === true) {
        out.push(`${at}: privileged`);
      }
      if ((sc.seccompProfile ?? pod.seccompProfile)?.type !== "RuntimeDefault") {
        out.push(`${at}: seccompProfile must be RuntimeDefault`);
      }
      if (!oneShot) {
        for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
          if (!c[probe]) {
            out.push(`${at}: ${probe} missing`);
          }
        }
        const livePath = c.livenessProbe?.httpGet?.path;
        if (livePath !== undefined && livePath !== "/healthz") {
          out.push(`${at}: livenessProbe must use /healthz (liveness never depends on the database), not ${livePath}`);
        }
      }
    }
  }

  const server = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === "gesso-server");
  if (!server) {
    out.push("no Deployment gesso-server");
  } else {
    const spec = server.spec;
    const pod = spec.template.spec;
    if ((spec.replicas ?? 1) < 2) {
      out.push(`${where(server)}: at least 2 replicas`);
    }
    if (spec.strategy?.rollingUpdate?.maxUnavailable !== 0) {
      out.push(`${where(server)}: rolling updates must have maxUnavailable 0`);
    }
    if (!(pod.topologySpreadConstraints ?? []).some((t) => t.topologyKey === "kubernetes.io/hostname")) {
      out.push(`${where(server)}: pods must spread across nodes (topologySpreadConstraints on kubernetes.io/hostname)`);
    }
    // The drain (docs/operations.md#shutdown, measured in e2e.lifecycle and e2e.load_balancer):
    // readiness must fail well within the grace, and the pod must get the grace plus the longest request.
    const grace = seconds(config.GESSO_DRAIN_GRACE_MS ?? 5000);
    const longestRequest = Math.max(seconds(config.GESSO_READ_TIMEOUT_MS ?? 30000), seconds(config.GESSO_WRITE_TIMEOUT_MS ?? 30000));
    const container = pod.containers.find((c) => c.name === "server") ?? pod.containers[0];
    const readiness = container.readinessProbe ?? {};
    const noticed = (readiness.periodSeconds ?? 10) * (readiness.failureThreshold ?? 3);
    if (noticed >= grace) {
      out.push(`${where(server)}: readiness notices a drain after ${noticed} s, not within GESSO_DRAIN_GRACE_MS (${grace} s)`);
    }
    const termination = pod.terminationGracePeriodSeconds ?? 30;
    if (termination < grace + longestRequest) {
      out.push(`${where(server)}: terminationGracePeriodSeconds ${termination} < drain grace ${grace} s + longest request ${longestRequest} s`);
    }
    if (container.readinessProbe?.httpGet?.path !== "/readyz") {
      out.push(`${where(server)}: readinessProbe must use /readyz`);
    }
  }
  const worker = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === "gesso-worker");
  if (!worker) {
    out.push("no Deployment gesso-worker");
  }
  for (const d of objects.filter((o) => o.kind === "Deployment" && o.metadata?.name?.startsWith("gesso-"))) {
    const labels = d.spec.template.metadata?.labels ?? {};
    const covered = objects.some(
      (p) =>
        p.kind === "PodDisruptionBudget" &&
        Object.entries(p.spec?.selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
    );
    if (!covered) {
      out.push(`${where(d)}: no PodDisruptionBudget selects its pods`);
    }
  }
  if (!objects.some((o) => o.kind === "HorizontalPodAutoscaler" && o.spec?.scaleTargetRef?.name === "gesso-server")) {
    out.push("no HorizontalPodAutoscaler for gesso-server");
  }
  if (!objects.some((o) => o.kind === "Job" && (o.spec?.template?.spec?.containers ?? []).some((c) => (c.command ?? []).includes("migrate")))) {
    out.push("no migration Job");
  }
  const media = objects.find((o) => o.kind === "PersistentVolumeClaim" && o.metadata?.name === "gesso-media");
  if (!media) {
    out.push("no PersistentVolumeClaim gesso-media");
  } else if (requireSharedMedia && !(media.spec?.accessModes ?? []).includes("ReadWriteMany")) {
    out.push(`${where(media)}: media must be ReadWriteMany (servers and workers on several nodes share it)`);
  }
  for (const sa of objects.filter((o) => o.kind === "ServiceAccount")) {
    if (sa.automountServiceAccountToken !== false) {
      out.push(`${where(sa)}: automountServiceAccountToken must be false`);
    }
  }
  return out;
}
