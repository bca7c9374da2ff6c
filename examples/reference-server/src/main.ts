import { startServer } from './server';

// `npm start`: the reference server with everything in one process by default.
// Flags: --api-only (HTTP only), --worker-only (delivery and background workers only).

const server = await startServer({ argv: process.argv.slice(2) }).catch((error: unknown) => {
  console.error(`Holdfast could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

const { config } = server;
const lines = [
  `Holdfast reference server (${config.role === 'all' ? 'API and workers' : config.role === 'api' ? 'API only' : 'workers only'})`,
];
lines.push(`  database:   ${server.database}`);
if (server.url) {
  lines.push(`  listening:  Holdfast reference server listening on ${server.url}`);
  lines.push(`  dashboard:  ${server.url}/dashboard`);
  lines.push(`  API docs:   ${server.url}/docs   (OpenAPI: ${server.url}/openapi.json)`);
}
if (server.metricsUrl) lines.push(`  metrics:    ${server.metricsUrl}`);
if (server.healthUrl) lines.push(`  health:     ${server.healthUrl}/livez, ${server.healthUrl}/readyz`);
if (config.redisUrl) lines.push('  rate limits: shared through Redis (HOLDFAST_REDIS_URL)');
if (server.demoKey) {
  lines.push('');
  lines.push(`  Demo API key (account acct_demo, all scopes). It is shown this once; save it now:`);
  lines.push(`    ${server.demoKey}`);
  if (server.url)
    lines.push(`  Try: curl -H "Authorization: Bearer ${server.demoKey}" ${server.url}/v1/orders`);
  const seeded = server.demoData;
  if (seeded) {
    lines.push(
      `  Demo data: ${seeded.orders} orders, ${seeded.payments} payments, a refund and a subscription;`,
      seeded.endpoints > 0
        ? `  ${seeded.endpoints} webhook endpoints on the built-in receiver (${server.url}/demo/receiver/...): see the dashboard.`
        : '  no webhook endpoints: the built-in demo receiver runs outside production only.',
    );
  }
} else if (server.url) {
  lines.push('');
  lines.push(
    '  Need an API key? npm run keys:create -w @holdfast/reference-server -- --account acct_demo --scopes "*"',
  );
}
if (config.allowPrivateDestinations) {
  lines.push('');
  lines.push(
    '  WARNING: HOLDFAST_ALLOW_PRIVATE_DESTINATIONS=1: webhooks may be sent to private and loopback',
  );
  lines.push('  addresses. This is for local development and tests only; never set it in production.');
}
console.log(lines.join('\n'));

// A graceful stop waits for in-flight requests and worker rounds; one stuck on a database that
// went away must not keep the process from ever exiting (orchestrators would SIGKILL it anyway).
const SHUTDOWN_DEADLINE_MS = 20_000;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: finishing in-flight work and stopping...`);
    setTimeout(() => {
      console.error(`shutdown did not finish within ${SHUTDOWN_DEADLINE_MS / 1000} s: exiting`);
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('shutdown failed:', error);
        process.exit(1);
      },
    );
  });
}
