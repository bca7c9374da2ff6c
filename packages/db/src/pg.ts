import type { Pool, PoolClient } from 'pg';
import type { Db, Listener, Transaction } from './index';
import { quoteChannel, reconnectDelay } from './retry';
import { rowsOf } from './rows';
import { statementName } from './statement-name';

/** The slice of a node-postgres `Pool`, `Client` or `PoolClient` an adapter needs. */
export interface PgLike {
  query(config: { name?: string; text: string; values: unknown[] }): PromiseLike<{ rows: unknown[] }>;
}

/** Options of {@link fromPg} and {@link pgTransaction}. */
export interface PgOptions {
  /**
   * Prepare each statement once per connection under {@link statementName} of its text. Turn
   * it off behind a pooler that cannot keep named statements (PgBouncer in transaction mode
   * before 1.21). @defaultValue true
   */
  readonly prepare?: boolean;
}

/**
 * A node-postgres `Pool`, `Client` or `PoolClient` as a {@link Db}. Pass the client that ran
 * `BEGIN` to work in its transaction (a `Pool` runs each statement on any connection), or use
 * {@link pgTransaction}.
 *
 * Each statement is prepared once per connection (a named statement, as postgres.js does by
 * default), so later runs skip parsing and planning it again. The name is a hash of the text,
 * so every package and every copy of this one on the same pool agree on it.
 *
 * @example
 * ```ts
 * const page = await paginate(fromPg(pool), { from: 'orders', select: 'id', ... });
 * ```
 */
export function fromPg(client: PgLike, options: PgOptions = {}): Db {
  const prepare = options.prepare ?? true;
  return {
    async query<Row>(text: string, values: readonly unknown[] = []) {
      const config = prepare
        ? { name: statementName(text), text, values: [...values] }
        : { text, values: [...values] };
      return rowsOf<Row>(await client.query(config));
    },
  };
}

/**
 * Transactions of a node-postgres pool as a {@link Transaction}: one client of the pool,
 * `BEGIN`, `work(client, db)`, then `COMMIT`, or `ROLLBACK` and the error rethrown; the client
 * goes back to the pool either way (destroyed when its connection failed or even the rollback
 * failed, since its connection is then in no known state). A connection that dies during the
 * transaction (a terminated backend) rejects the transaction; it never ends the process.
 *
 * @example
 * ```ts
 * const transaction = pgTransaction(pool);
 * await transaction(async (client, db) => {
 *   await client.query('insert into orders (id) values ($1)', [id]);
 *   await enqueueEvent(db, event);
 * });
 * ```
 */
export function pgTransaction(pool: Pool, options: PgOptions = {}): Transaction<PoolClient> {
  return async <T>(work: (tx: PoolClient, db: Db) => Promise<T>): Promise<T> => {
    let broken: Error | undefined;
    // A checked-out client's 'error' event has no listener of the pool's: a connection that dies
    // inside the transaction (a terminated backend) would end the process. Its statements reject
    // anyway; the error only marks the client for destruction on release.
    const onError = (error: Error) => {
      broken ??= error;
    };
    const client = await checkout(pool, onError);
    try {
      await client.query('begin');
      const answer = await work(client, fromPg(client, options));
      await client.query('commit');
      return answer;
    } catch (error) {
      try {
        await client.query('rollback');
      } catch (rollback) {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      }
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  };
}

/**
 * A client of `pool` with `onError` listening from the moment the pool hands it over. Awaiting
 * `pool.connect()` and then listening leaves a gap: the message that ends a new connection's
 * start-up and a terminated backend's error can arrive in one read, and the error is emitted
 * before the await resumes, with no listener, which ends the process.
 */
function checkout(pool: Pool, onError: (error: Error) => void): Promise<PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || client === undefined) reject(error ?? new Error('the pool gave no client'));
      else {
        client.on('error', onError);
        resolve(client);
      }
    });
  });
}

/**
 * LISTEN/NOTIFY on a node-postgres pool as a {@link Listener}: each `listen` holds one client
 * of `pool` for as long as it listens (size the pool for it), and when that connection fails it
 * goes back to the pool destroyed and another is taken, after 250 ms doubling to 5 s.
 *
 * @example
 * ```ts
 * const worker = startDeliveryWorker({ db: fromPg(pool), listener: pgListener(pool) });
 * ```
 */
export function pgListener(pool: Pool): Listener {
  return {
    async listen(channel, onNotify) {
      const statement = `listen ${quoteChannel(channel)}`;
      let stopped = false;
      let client: PoolClient | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let failures = 0;
      const onNotification = (message: { channel: string; payload?: string | undefined }) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      };
      const drop = (held: PoolClient, error: Error) => {
        held.removeListener('notification', onNotification);
        held.removeListener('error', onError);
        held.release(error);
        if (client === held) client = undefined;
      };
      const onError = (error: Error) => {
        const held = client;
        if (held === undefined) return;
        drop(held, error);
        schedule();
      };
      const schedule = () => {
        if (stopped || timer !== undefined) return;
        timer = setTimeout(() => {
          timer = undefined;
          void attempt();
        }, reconnectDelay(failures));
        failures += 1;
      };
      const attempt = async (): Promise<void> => {
        let held: PoolClient | undefined;
        try {
          held = await checkout(pool, onError);
          held.on('notification', onNotification);
          client = held;
          await held.query(statement);
          if (stopped) throw new Error('stopped');
          failures = 0;
          onNotify('');
        } catch (error) {
          if (held !== undefined && client === held)
            drop(held, error instanceof Error ? error : new Error(String(error)));
          schedule();
        }
      };
      await attempt();
      return async () => {
        stopped = true;
        if (timer !== undefined) clearTimeout(timer);
        const held = client;
        if (held === undefined) return;
        client = undefined;
        held.removeListener('notification', onNotification);
        held.removeListener('error', onError);
        try {
          await held.query(`unlisten ${quoteChannel(channel)}`);
          held.release();
        } catch (error) {
          held.release(error instanceof Error ? error : new Error(String(error)));
        }
      };
    },
  };
}
