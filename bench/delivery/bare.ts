// The bare limit of bench/delivery (issue 16): no library, the least a PostgreSQL queue can do.
// Lease 100 due deliveries with one UPDATE ... FOR UPDATE SKIP LOCKED (reading the URL and the
// payload in the same statement), POST them concurrently with undici, mark them all succeeded
// with one UPDATE; repeat while there is work. No signing, SSRF check, attempt log, bound or
// fairness. Run as a child process like the workers.
import postgres from 'postgres';
import { Agent, request } from 'undici';

const sql = postgres(process.env.DATABASE_URL ?? '', { max: 10, onnotice: () => {} });
const agent = new Agent();
const account = process.env.ACCOUNT ?? '';
let running = true;
process.once('SIGTERM', () => {
  running = false;
});
console.log('ready');
while (running) {
  const rows = await sql<{ id: string; url: string; payload: string }[]>`
    update holdfast_deliveries d set lease_owner = 'bare', lease_expires_at = now() + interval '30 seconds'
    from holdfast_webhook_endpoints e, holdfast_events ev
    where d.id in (
      select id from holdfast_deliveries
      where account_id = ${account} and status = 'pending' and lease_owner is null and next_attempt_at <= now()
      limit 100 for update skip locked)
      and e.id = d.endpoint_id and ev.id = d.event_id
    returning d.id, e.url, ev.payload`;
  if (rows.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    continue;
  }
  await Promise.all(
    rows.map(async (row) => {
      const response = await request(row.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: row.payload,
      });
      await response.body.dump();
    }),
  );
  await sql`
    update holdfast_deliveries set status = 'succeeded', lease_owner = null, lease_expires_at = null
    where id = any(${sql.array(rows.map((row) => row.id))}::text[])`;
}
await sql.end();
await agent.close();
process.exit(0);
