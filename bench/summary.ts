// Every bench ends with one summary line. It is printed, and kept beside the bench in
// `<script>.last.txt` with when and on what it ran, so the root README's "Measured" table is
// rendered from what a bench last printed (scripts/bench-table.ts) instead of copied by hand.
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Prints `line` (after a blank line) and records it for the README's table; `name` tells a
 * script's second summary line from its first.
 *
 * @example
 * ```ts
 * summary(import.meta.url, `delivery: 1 process ${one}/s, ...`);
 * ```
 */
export function summary(scriptUrl: string, line: string, name?: string): void {
  console.log(`\n${line}`);
  const script = fileURLToPath(scriptUrl);
  const [load] = loadavg();
  const record = [
    line,
    `run ${new Date().toISOString().slice(0, 10)} on ${availableParallelism()} cores, load average ${(load ?? 0).toFixed(1)} at the end`,
    '',
  ].join('\n');
  // A script with two summary lines names the second: `<script>.<name>.last.txt`.
  const file = `${basename(script, '.ts')}${name ? `.${name}` : ''}.last.txt`;
  writeFileSync(`${dirname(script)}/${file}`, record);
}
