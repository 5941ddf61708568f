// Validates every overlay in deploy/k8s/overlays (or the directories named): renders it, checks
// schemas, unknown fields and Gesso's policy. Prints each violation; exits 1 if there is any.
//   node validate.mjs                      # every overlay
//   node validate.mjs ../overlays/prod     # one

import { readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { policyViolations, schemaViolations, unknownFieldViolations } from "./checks.mjs";
import { render } from "./render.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const overlays = join(here, "..", "overlays");
const dirs =
  process.argv.length > 2
    ? process.argv.slice(2).map((d) => resolve(d))
    : readdirSync(overlays, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(overlays, e.name));

let total = 0;
for (const dir of dirs) {
  const name = relative(process.cwd(), dir) || dir;
  let result;
  try {
    result = render(dir);
  } catch (e) {
    console.log(`${name}: cannot render: ${e.message}`);
    total += 1;
    continue;
  }
  // Development installs keep media on one node; everything else must share it across nodes.
  const dev = dir.endsWith("/dev");
  const violations = [
    ...result.drift.map((d) => `renderer drift: ${d}`),
    ...(await schemaViolations(result.objects)),
    ...unknownFieldViolations(result.objects),
    ...policyViolations(result.objects, { requireSharedMedia: !dev }),
  ];
  console.log(`${name}: ${result.objects.length} objects (${result.renderer}), ${violations.length} violations`);
  for (const v of violations) {
    console.log(`  ${v}`);
  }
  total += violations.length;
}
process.exit(total === 0 ? 0 : 1);
