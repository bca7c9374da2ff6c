import { startServer } from './src/server';
import { API_KEYS, send, shapes } from './test/hostile-harness';
const server = await startServer({ env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', HOLDFAST_DATA_DIR: 'memory://', DATABASE_URL: '', HOLDFAST_ROLE: 'api',
  HOLDFAST_API_KEYS: API_KEYS, HOLDFAST_RATE_LIMIT: '100000/1s', HOLDFAST_ADDRESS_RATE_LIMIT: '100000/1s' } });
const created = await send(server.url, { name: 'o', method: 'POST', path: '/v1/orders', body: Buffer.from('{"currency":"EUR","total":100}') });
const all = shapes(JSON.parse(created.text).id);
const want = (process.env.SHAPES ?? '').split(',');
for (const shape of all.filter((s) => want.includes(s.name))) {
  for (let i = 0; i < 8; i++) {
    const c = process.cpuUsage();
    const r = await send(server.url, shape);
    const d = process.cpuUsage(c);
    if (i >= 5) console.log(shape.name, r.status, ((d.user + d.system) / 1000).toFixed(1), 'ms cpu');
  }
}
await server.close();
