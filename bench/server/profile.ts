// Summarises V8 CPU profiles (`node --cpu-prof`): the functions with the most self time, and the
// same time by where the code lives (our packages, the server, each dependency, Node itself).
// Under load the shares stay meaningful where absolute timings do not.
//
//   npx tsx bench/server/profile.ts <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: `@holdfast/<pkg>`, `server`, a dependency's name, `node`, or what V8 calls it. */
export function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /\/packages\/([^/]+)\//.exec(url);
  if (pkg && !url.includes('node_modules')) return `@holdfast/${pkg[1]}`;
  if (url.includes('/examples/reference-server/')) return 'server';
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/g;
  let last: string | undefined;
  for (let m = dep.exec(url); m; m = dep.exec(url)) last = m[1];
  if (last) return last;
  if (url.startsWith('node:')) return 'node';
  return url;
}

/** Self time per frame and per area, in ms and as a share of the busy (non-idle) time. */
export function summarise(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  // The inspector's own start (bench/server/child.ts) is the profiler, not the server.
  const profiler = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      if (byId.get(at)?.callFrame.url.endsWith('bench/server/child.ts')) return true;
    return false;
  };
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  for (const id of self.keys()) if (profiler(id)) self.delete(id);
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') continue;
    busy += ms;
    const where = area(url, functionName);
    const file = url.split('/').slice(-1)[0] ?? '';
    const key = `${functionName || '(anonymous)'} ${where}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
    frames.set(key, (frames.get(key) ?? 0) + ms);
    areas.set(where, (areas.get(where) ?? 0) + ms);
  }
  const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines = [`${file}: ${busy.toFixed(0)} ms busy`, '  by area (self time):'];
  for (const [where, ms] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15))
    lines.push(`    ${pct(ms)}  ${where}`);
  lines.push(`  top ${top} functions (self time):`);
  for (const [key, ms] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`    ${pct(ms)}  ${key}`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('profile.ts') && process.argv[2]) {
  console.log(summarise(process.argv[2], Number(process.argv[3] ?? 25)));
}
