import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { diffDocuments, type Json } from './diff';
import { servedDocument } from './document';
import { RULES } from './rules';

// `npm run check:contract`: regenerate the /v1 document from the running app and compare it with
// the published one. Breaking changes fail, naming the operation, the JSON path and the rule;
// additive ones pass with a summary. `npm run contract:accept` (`--accept`) publishes the new
// document when the check allows it (never a breaking change: that needs /v2, see CONTRIBUTING.md).

const PUBLISHED = fileURLToPath(new URL('../../examples/reference-server/openapi/v1.json', import.meta.url));
const accept = process.argv.includes('--accept');

const current = await servedDocument();
let published: string | undefined;
try {
  published = await readFile(PUBLISHED, 'utf8');
} catch {
  published = undefined;
}
if (published === undefined) {
  if (!accept) {
    console.error(`✗ ${PUBLISHED} is missing: run npm run contract:accept to publish the first version.`);
    process.exit(1);
  }
  await writeFile(PUBLISHED, current);
  console.log(`✓ published the first /v1 document at ${PUBLISHED}`);
  process.exit(0);
}

const findings = diffDocuments(JSON.parse(published) as Json, JSON.parse(current) as Json);
const breaking = findings.filter((f) => f.kind === 'breaking');
const additive = findings.filter((f) => f.kind === 'additive');
for (const f of breaking) {
  console.error(
    `✗ BREAKING ${f.operation}\n    at   ${f.path}\n    what ${f.detail}\n    rule ${f.rule ? RULES[f.rule] : ''}`,
  );
}
if (additive.length > 0) {
  console.log(`Additive changes (${additive.length}):`);
  for (const f of additive) console.log(`  + ${f.operation}: ${f.detail}  (${f.path})`);
}
if (breaking.length > 0) {
  console.error(
    `\n✗ ${breaking.length} breaking change(s) to the published /v1 contract. /v1 cannot change this way: add a /v2 beside it (CONTRIBUTING.md, "The published contract, and breaking it on purpose"), or undo the change.`,
  );
  process.exit(1);
}
if (published === current) {
  console.log('✓ /openapi.json matches the published examples/reference-server/openapi/v1.json');
} else if (accept) {
  await writeFile(PUBLISHED, current);
  console.log(
    '✓ no breaking change; examples/reference-server/openapi/v1.json rewritten: review and commit it',
  );
} else {
  console.log(
    `✓ no breaking change; /openapi.json differs from the published v1.json${additive.length ? '' : ' in descriptions or examples only'}: run npm run contract:accept and commit the result to publish it`,
  );
}
