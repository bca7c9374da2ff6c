import { expect, it } from 'vitest';
import { connect } from '../src/index';

it('repro', async () => {
  const db = await connect({ databaseUrl: process.env.DATABASE_URL, max: 2 });
  const killer = await connect({ databaseUrl: process.env.DATABASE_URL, max: 1 });
  const hung: number[] = [];
  for (let round = 0; round < 300; round += 1) {
    let pid: number | undefined;
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => { started = resolve; });
    const tx = db.sql.begin(async (t) => {
      const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
      pid = row?.pid;
      started();
      await t`select pg_sleep(5)`;
      await t`select 1`;
    });
    const outcome = tx.then(() => 'committed', (e: any) => String(e?.code ?? 'other'));
    await running;
    if (round % 3 === 1) await new Promise((r) => setImmediate(r));
    if (round % 3 === 2) await new Promise((r) => setTimeout(r, Math.random() * 5));
    await killer.sql`select pg_terminate_backend(${pid ?? 0})`;
    const o = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('HUNG'), 8000))]);
    if (o !== 'CONNECTION_CLOSED') { console.log('round', round, o); hung.push(round); if (o === 'HUNG') break; }
  }
  expect(hung).toEqual([]);
  await killer.close();
  await db.close();
}, 600_000);
