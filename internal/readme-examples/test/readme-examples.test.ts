import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

// Every fenced ```ts runnable block of every packages/*/README.md is a complete module (its own
// imports, no names from elsewhere) and must type-check as written, with the tree's strict
// settings and the packages resolved by name, as a user would import them. API listings are
// fenced ```ts signatures and are not compiled (they are declarations without bodies).

const root = new URL('../../../', import.meta.url).pathname;
const out = join(root, 'internal/readme-examples/.examples');
const FENCE = /^```(\S*)(?:[ \t]+(\S+))?[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;

interface Block {
  readonly pkg: string;
  readonly index: number;
  readonly info: string;
  readonly code: string;
  readonly line: number;
}

async function blocks(): Promise<Block[]> {
  const found: Block[] = [];
  for (const pkg of (await readdir(join(root, 'packages'))).sort()) {
    let text: string;
    try {
      text = await readFile(join(root, 'packages', pkg, 'README.md'), 'utf8');
    } catch {
      continue;
    }
    let index = 0;
    for (const match of text.matchAll(FENCE)) {
      const [, lang = '', info = '', code = ''] = match;
      if (lang !== 'ts' && lang !== 'typescript') continue;
      const line = text.slice(0, match.index).split('\n').length;
      found.push({ pkg, index: index++, info, code, line });
    }
  }
  return found;
}

const all = await blocks();
const runnable = all.filter((block) => block.info === 'runnable');

afterAll(() => rm(out, { recursive: true, force: true }));

describe('package README examples', () => {
  it('finds runnable examples in every README', () => {
    expect(runnable.length).toBeGreaterThan(10);
  });

  it('marks every ts block: runnable (type-checked) or signatures (an API listing)', () => {
    const unmarked = all
      .filter((block) => block.info !== 'runnable' && block.info !== 'signatures')
      .map((block) => `packages/${block.pkg}/README.md:${block.line}`);
    expect(unmarked).toEqual([]);
  });

  it('type-checks every runnable example as written', async () => {
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    const files = new Map<string, Block>();
    for (const block of runnable) {
      const file = join(out, `${block.pkg}-${block.index}.ts`);
      // A block with no import or export is still a module of its own (top-level await, no globals shared).
      await writeFile(
        file,
        /^\s*(import|export)\b/m.test(block.code) ? block.code : `${block.code}\nexport {};\n`,
      );
      files.set(file, block);
    }
    const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
    const program = ts.createProgram([...files.keys()], {
      ...parsed.options,
      noEmit: true,
      declaration: false,
      isolatedDeclarations: false,
    });
    // Only the examples are checked: the packages' own sources are the typecheck's, and checking
    // them here too would take most of the time (the checker reads what the examples use).
    const examples = program.getSourceFiles().filter((file) => files.has(file.fileName));
    expect(examples).toHaveLength(files.size);
    const problems = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...examples.flatMap((file) => [
        ...program.getSyntacticDiagnostics(file),
        ...program.getSemanticDiagnostics(file),
      ]),
    ]
      .filter((diagnostic) => diagnostic.file !== undefined && files.has(diagnostic.file.fileName))
      .map((diagnostic) => {
        const file = diagnostic.file as ts.SourceFile;
        const block = files.get(file.fileName) as Block;
        const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
        return `packages/${block.pkg}/README.md:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);
});
