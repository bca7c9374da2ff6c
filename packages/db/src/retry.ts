/** The wait before reconnect attempt `n` (0-based): doubling from 250 ms, at most 5 s. */
export function reconnectDelay(n: number): number {
  return Math.min(5_000, 250 * 2 ** Math.min(n, 5));
}

/** `"name"`, with double quotes doubled: a channel name as a LISTEN identifier. */
export function quoteChannel(channel: string): string {
  if (channel === '' || channel.includes('\0')) throw new TypeError('a channel name must be non-empty text');
  return `"${channel.replaceAll('"', '""')}"`;
}
