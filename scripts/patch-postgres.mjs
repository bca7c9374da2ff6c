#!/usr/bin/env node
// Guards postgres.js (3.4.9, the latest release) against writing to a connection whose socket is
// gone: porsager/postgres#1154, #1208 (open; fixes proposed in #1168, #1209, none released).
//
// When a backend dies mid-query (pg_terminate_backend, a restart, a proxy cutting it), `closed()`
// rejects the query and sets `socket = null`. `sql.begin()` then sends its own `rollback` on that
// connection (and application code in a transaction may send more): `write()` defers it to a
// `setImmediate`, where `socket.write` throws `TypeError: Cannot read properties of null (reading
// 'write')` outside any promise, so the process exits. Nothing outside the driver can stop that
// write, so the guard is here, in three places of `connection.js` (ESM, CJS and Cloudflare
// builds alike):
//   - execute(): a query on a connection with no socket is rejected with CONNECTION_CLOSED at
//     once (returning true, as its catch does, so begin()/reserve() do not park the connection);
//   - nextWrite(): a deferred write that finds no socket settles its callback and is dropped;
//   - closed() and terminate(): the pending write is dropped with its timer, so the next session
//     on this connection does not start with the dead one's bytes and a timer that never fires;
//   - closed(): the dead session's last error (57P01 when terminated) and its query are
//     forgotten. The next session's first ReadyForQuery otherwise hands that error to whatever
//     `query` still holds: the query that reconnected it, or the array-types query of a session
//     terminated while starting, whose rejection nothing awaits (an unhandled rejection, the
//     process exits). Every query of the dead session is rejected (here, or in the socket's
//     'error' handler just before), also when the connection reconnects for the query that opened
//     it: a transaction's query written while it was connecting waited forever otherwise. With no
//     query left, `sql.end()` no longer waits forever for an answer;
//   - closed(): a query sent between the socket's 'error' and its 'close' (a transaction's
//     `rollback`, sent as the error rejected its query) stayed in `sent` when the close came with
//     an error: the next session then matched every answer to the query before it and its
//     queries waited forever. Whatever is left in `sent` at the close is rejected;
//   - ReadyForQuery(): the array-types query a new session runs before its first query is
//     awaited by nothing, so a connection lost right then (ECONNRESET) was an unhandled rejection
//     that ended the process. Its failure is the connection's, reported by the connection's own
//     error path (the query that opened it is rejected, or retried on a new session), so the
//     promise is only kept from being unhandled.
//
// And in `index.js`, `begin()`: when its connection closes, `begin()` rejects at once (it races
// the callback against the connection's close), but the callback runs on. Its next query went to
// `c.execute()` on the same connection object, which by then may have reconnected for another
// caller and be reserved by another transaction: a dead transaction's queries (and its COMMIT)
// ran inside someone else's, which then waited behind them, or hung. A scope whose connection
// closed now rejects every later query with CONNECTION_CLOSED instead.
//
// Run by `postinstall`. Files are replaced (written aside, then renamed), never written in place:
// a node_modules of hard links shares them with other checkouts. A postgres whose source no
// longer matches fails the install loudly: check whether upstream fixed it, then drop this file.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const MARK = '/* holdfast: closed-socket guard 2 */';
// What earlier versions of this script wrote: such a file cannot be patched again in place.
const OLD_MARKS = ['/* holdfast: closed-socket guard */'];

const REPLACEMENTS = [
  {
    what: 'execute() on a connection without a socket',
    from: `  function execute(q) {
    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    to: `  function execute(q) {
    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    ${MARK}
    if (!socket)
      return (queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true)
`,
  },
  {
    what: 'nextWrite() without a socket',
    from: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)
`,
    to: `  function nextWrite(fn) {
    ${MARK}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      fn && fn(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)
`,
  },
  {
    what: 'terminate() drops the pending write',
    from: `    clearImmediate(nextWriteTimer)
    if (socket) {`,
    to: `    clearImmediate(nextWriteTimer)
    ${MARK}
    chunk = nextWriteTimer = null
    if (socket) {`,
  },
  {
    what: 'closed() drops the pending write',
    from: `    remaining = 0
    incomings = null
    clearImmediate(nextWriteTimer)
`,
    to: `    remaining = 0
    incomings = null
    clearImmediate(nextWriteTimer)
    ${MARK}
    chunk = nextWriteTimer = null
`,
  },
  {
    what: "closed() forgets the dead session's query and error",
    from: `    if (initial)
      return reconnect()

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
`,
    to: `    ${MARK}
    errorResponse = null
    if (initial) {
      const lost = Errors.connection('CONNECTION_CLOSED', options)
      query && queryError(query, lost)
      while (sent.length)
        queryError(sent.shift(), lost)
      query = null
      return reconnect()
    }

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    ${MARK}
    const left = Errors.connection('CONNECTION_CLOSED', options)
    while (sent.length)
      queryError(sent.shift(), left)
    query = null
`,
  },
  {
    what: 'the array-types query of a start-up that fails',
    from: `        return fetchArrayTypes()
`,
    to: `        ${MARK}
        return fetchArrayTypes().catch(() => {})
`,
  },
];

const INDEX_REPLACEMENTS = [
  {
    what: 'begin() remembers that its connection closed',
    from: `    let savepoints = 0
`,
    to: `    let savepoints = 0
      ${MARK}
      , closedScope = false
`,
  },
  {
    what: 'begin() marks the scope closed when its connection closes',
    from: `        new Promise((_, reject) => connection.onclose = reject)
`,
    to: `        ${MARK}
        new Promise((_, reject) => connection.onclose = (e) => (closedScope = true, reject(e)))
`,
  },
  {
    what: 'a closed scope sends nothing more',
    from: `        q.catch(e => uncaughtError || (uncaughtError = e))
`,
    to: `        q.catch(e => uncaughtError || (uncaughtError = e))
        ${MARK}
        if (closedScope)
          return q.reject(Errors.connection('CONNECTION_CLOSED', options))
`,
  },
];

/** Applies `replacements` to `file` unless marked already: 'patched', 'already' or exits. */
function patchFile(file, replacements, build, version) {
  const source = readFileSync(file, 'utf8');
  if (source.includes(MARK)) return 'already';
  if (OLD_MARKS.some((mark) => source.includes(mark))) {
    console.error(
      `patch-postgres: ${build} carries an earlier guard; reinstall postgres (rm -rf node_modules/postgres && npm install), then this runs again`,
    );
    process.exit(1);
  }
  let next = source;
  for (const { what, from, to } of replacements) {
    const at = next.indexOf(from);
    if (at === -1 || next.indexOf(from, at + 1) !== -1) {
      console.error(
        `patch-postgres: postgres ${version} ${build} does not match (${what}). ` +
          'If upstream fixed porsager/postgres#1208, delete scripts/patch-postgres.mjs and its postinstall.',
      );
      process.exit(1);
    }
    next = next.slice(0, at) + to + next.slice(at + from.length);
  }
  // Written aside then renamed: a node_modules of hard links shares files with other checkouts.
  const aside = `${file}.${process.pid}.tmp`;
  writeFileSync(aside, next);
  renameSync(aside, file);
  return 'patched';
}

/** The installed postgres package's directory (its exports do not include package.json). */
function postgresRoot() {
  let entry;
  try {
    entry = createRequire(import.meta.url).resolve('postgres');
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'postgres') return dir;
  }
  return undefined;
}

const root = postgresRoot();
if (root === undefined) {
  console.log('patch-postgres: postgres is not installed; nothing to guard');
  process.exit(0);
}
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
let patched = 0;
let already = 0;
for (const build of ['src', 'cjs/src', 'cf/src']) {
  for (const [name, replacements] of [
    ['connection.js', REPLACEMENTS],
    ['index.js', INDEX_REPLACEMENTS],
  ]) {
    const file = join(root, build, name);
    if (!existsSync(file)) continue;
    const outcome = patchFile(file, replacements, `${build}/${name}`, version);
    if (outcome === 'patched') patched += 1;
    else already += 1;
  }
}
console.log(
  `patch-postgres: postgres ${version}: ${patched} file(s) guarded against closed sockets, ${already} already were`,
);
