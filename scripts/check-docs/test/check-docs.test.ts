import { describe, expect, it } from 'vitest';
import {
  type BenchLine,
  checkInstall,
  checkMigrations,
  checkQuotedLines,
  checkSizes,
  citations,
  floorOf,
  namedMigrations,
  nodeClaims,
  outsideLinks,
} from '../../check-docs';

describe('migration file lists', () => {
  const readme = [
    'Files: `001_keys.sql` and `002_statements_<hash>.sql` under `node_modules/@holdfast/x/migrations/`.',
    'cp node_modules/@holdfast/x/migrations/001_keys.sql migrations/<timestamp>_holdfast-x-001-keys.sql',
    'Flyway: `V12__holdfast_x_001_keys.sql`.',
  ].join('\n');

  it('reads the shipped names, not a tool renaming them', () => {
    expect(namedMigrations(readme).map((m) => m.name)).toEqual(['001_keys.sql', '002_statements_<hash>.sql']);
  });

  it('passes when the README names exactly the files, a placeholder standing for a name part', () => {
    expect(checkMigrations('packages/x', readme, ['001_keys.sql', '002_statements_3fa9c1.sql'])).toEqual([]);
  });

  it('fails on a file the README does not name, a name with no file, and no directory at all', () => {
    const extra = checkMigrations('packages/x', readme, [
      '001_keys.sql',
      '002_statements_a.sql',
      '003_more.sql',
    ]);
    expect(extra.map((f) => f.message)).toEqual(['never names packages/x/migrations/003_more.sql']);
    const missing = checkMigrations('packages/x', readme, ['001_keys.sql']);
    expect(missing.map((f) => f.message)).toEqual([
      'names 002_statements_<hash>.sql, not in packages/x/migrations/',
    ]);
    expect(checkMigrations('packages/x', readme, undefined)).toHaveLength(2);
    expect(checkMigrations('packages/x', 'No tables.', undefined)).toEqual([]);
  });
});

describe('Node versions', () => {
  it('reads the floor of engines.node and every claim of a lowest version', () => {
    expect(floorOf('>=20.19')).toBe('20.19');
    expect(floorOf('^20')).toBeUndefined();
    const text = 'ESM and CJS, Node 20.19+.\nNode 18 or later.\nRuns on Node >= 22.\nNode 20.20.2, 2 cores.';
    expect(nodeClaims(text)).toEqual([
      { version: '20.19', line: 1 },
      { version: '18', line: 2 },
      { version: '22', line: 3 },
    ]);
  });
});

describe('sizes and bench lines', () => {
  const benches: BenchLine[] = [
    { file: 'bench/webhooks/size.last.txt', prefix: 'webhooks size', line: 'webhooks size: 3,425 B gzipped' },
  ];

  it('a quoted summary line must be the last printed one; a form with placeholders passes', () => {
    expect(checkQuotedLines('R.md', '`webhooks size: 3,425 B gzipped` (today)', benches)).toEqual([]);
    expect(checkQuotedLines('R.md', 'Ends with `webhooks size: <n> B gzipped`.', benches)).toEqual([]);
    const stale = checkQuotedLines('R.md', 'Last: `webhooks size: 3,900 B gzipped`', benches);
    expect(stale).toHaveLength(1);
    expect(stale[0]?.rule).toBe('size');
  });

  it('a byte size outside a bench block and not in a last line fails; limits in KiB are not sizes', () => {
    const text = [
      '<!-- size:start (bench/webhooks/size.ts writes this block) -->',
      '| x | 7,591 B |',
      '<!-- size:end -->',
      'Gzipped, 3,425 B. Bodies up to 1 MiB, echoes up to 2 KiB.',
      'An answer of ~3 KB.',
    ].join('\n');
    expect(checkSizes('R.md', text, benches).map((f) => [f.line, f.message.split(',')[0]])).toEqual([
      [5, 'quotes the size 3 KB'],
    ]);
  });
});

describe('citations', () => {
  it('finds the spec, the contract, our issues and repository documents, not RFCs or upstream issues', () => {
    const text = [
      '// SPEC section 6: retries.',
      '// as CONTRACT section 8 says',
      '// see spec §4',
      '// (issue 37)',
      '// RFC 9112 section 3.2; porsager/postgres#1154',
      '// STYLE.md rule 3',
    ].join('\n');
    expect(citations(text).map((c) => c.line)).toEqual([1, 2, 3, 4, 6]);
  });

  it('finds README links that leave the package', () => {
    expect(outsideLinks('[bench](../../bench/x/README.md) and [api](#api) and [rfc](https://x)')).toEqual([
      { line: 1, target: '../../bench/x/README.md' },
    ]);
  });
});

describe('install instructions', () => {
  it('until a release, npm install @holdfast/... needs the way from a clone beside it', () => {
    const registry = '```sh\nnpm install @holdfast/x\n```';
    expect(checkInstall('R.md', registry, false)).toHaveLength(1);
    expect(checkInstall('R.md', `${registry}\nFrom a clone: \`npm pack -w packages/x\`.`, false)).toEqual([]);
    expect(checkInstall('R.md', registry, true)).toEqual([]);
  });
});
