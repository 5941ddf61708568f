// Renders a Kustomize directory: with `kubectl kustomize` where kubectl is installed, and otherwise
// with the subset of Kustomize that Gesso's manifests use (resources, namespace, labels, patches as
// strategic merges, replicas, images). Where kubectl is present the two renderings are compared, so
// the subset cannot drift from the real thing unnoticed.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

const clusterScoped = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "PersistentVolume",
  "StorageClass",
  "PriorityClass",
  "IngressClass",
]);

// Lists merged element by element in a strategic merge, and the key that identifies an element.
const mergeKeys = {
  containers: "name",
  initContainers: "name",
  volumes: "name",
  env: "name",
  envFrom: null,
  volumeMounts: "mountPath",
  ports: "containerPort",
};

export function parseYaml(text, origin) {
  const out = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      throw new Error(`${origin}: ${doc.errors[0].message}`);
    }
    const value = doc.toJS();
    if (value !== null && value !== undefined) {
      out.push(value);
    }
  }
  return out;
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function strategicMerge(target, patch) {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete target[key];
    } else if (isObject(value) && isObject(target[key])) {
      strategicMerge(target[key], value);
    } else if (Array.isArray(value) && Array.isArray(target[key]) && mergeKeys[key]) {
      const id = mergeKeys[key];
      for (const element of value) {
        const existing = target[key].find((e) => isObject(e) && e[id] === element[id]);
        if (existing) {
          strategicMerge(existing, element);
        } else {
          target[key].push(structuredClone(element));
        }
      }
    } else {
      target[key] = structuredClone(value);
    }
  }
  return target;
}

function podSpecs(object) {
  const spec = object.spec ?? {};
  if (object.kind === "CronJob") {
    return [spec.jobTemplate?.spec?.template?.spec].filter(Boolean);
  }
  return [spec.template?.spec].filter(Boolean);
}

function imageName(image) {
  const at = image.indexOf("@");
  const base = at >= 0 ? image.slice(0, at) : image;
  const colon = base.lastIndexOf(":");
  return colon > base.lastIndexOf("/") ? base.slice(0, colon) : base;
}

function renderSubset(dir) {
  const file = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
    .map((f) => join(dir, f))
    .find((f) => existsSync(f));
  if (!file) {
    throw new Error(`${dir}: no kustomization.yaml`);
  }
  const k = parseYaml(readFileSync(file, "utf8"), file)[0];
  let objects = [];
  for (const r of k.resources ?? []) {
    const path = resolve(dir, r);
    if (statSync(path).isDirectory()) {
      objects.push(...renderSubset(path));
    } else {
      objects.push(...parseYaml(readFileSync(path, "utf8"), path));
    }
  }
  for (const p of k.patches ?? []) {
    const path = resolve(dir, p.path);
    for (const patch of parseYaml(readFileSync(path, "utf8"), path)) {
      const target = objects.find((o) => o.kind === patch.kind && o.metadata?.name === patch.metadata?.name);
      if (!target) {
        throw new Error(`${path}: no ${patch.kind} named ${patch.metadata?.name} to patch`);
      }
      const { apiVersion, kind, ...changes } = patch;
      strategicMerge(target, changes);
    }
  }
  if (k.namespace) {
    for (const o of objects) {
      if (!clusterScoped.has(o.kind)) {
        o.metadata.namespace = k.namespace;
      }
    }
  }
  for (const l of k.labels ?? []) {
    for (const o of objects) {
      o.metadata.labels = { ...(o.metadata.labels ?? {}), ...l.pairs };
    }
  }
  for (const r of k.replicas ?? []) {
    for (const o of objects.filter((x) => x.metadata?.name === r.name && x.spec?.replicas !== undefined)) {
      o.spec.replicas = r.count;
    }
  }
  for (const img of k.images ?? []) {
    for (const spec of objects.flatMap(podSpecs)) {
      for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
        if (typeof c.image === "string" && imageName(c.image) === img.name) {
          const name = img.newName ?? img.name;
          c.image = img.digest ? `${name}@${img.digest}` : `${name}:${img.newTag ?? "latest"}`;
        }
      }
    }
  }
  return objects;
}

function kubectlAvailable() {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function identity(o) {
  return `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}

// Sorted keys, so that two renderings compare equal when they mean the same.
function canonical(value) {
  if (Array.isArray(value)) {
    return value.map(canonical);
  }
  if (isObject(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .filter((k) => value[k] !== undefined)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  }
  return value;
}

/// Renders `dir`. Returns { objects, renderer, drift }: drift lists where the subset renderer and
/// kubectl disagree (empty when kubectl is absent).
export function render(dir) {
  const subset = renderSubset(resolve(dir));
  if (!kubectlAvailable()) {
    return { objects: subset, renderer: "built-in Kustomize subset (kubectl not installed)", drift: [] };
  }
  const text = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  const real = parseYaml(text, `kubectl kustomize ${dir}`);
  const drift = [];
  const ours = new Map(subset.map((o) => [identity(o), JSON.stringify(canonical(o))]));
  for (const o of real) {
    const mine = ours.get(identity(o));
    if (mine === undefined) {
      drift.push(`${identity(o)}: rendered by kubectl only`);
    } else if (mine !== JSON.stringify(canonical(o))) {
      drift.push(`${identity(o)}: rendered differently by kubectl`);
    }
    ours.delete(identity(o));
  }
  for (const id of ours.keys()) {
    drift.push(`${id}: rendered by the built-in subset only`);
  }
  return { objects: real, renderer: "kubectl kustomize", drift };
}
