/**
 * Reads a request body as bytes, at most `maxBytes`: `undefined` when it is larger (declared in
 * `content-length` or found while streaming), and reading stops there instead of buffering a
 * chunked body of any size.
 *
 * @example
 * ```ts
 * const body = await readBodyCapped(request, 1024 * 1024);
 * if (body === undefined) return new Response(null, { status: 413 });
 * ```
 */
export async function readBodyCapped(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) return undefined;
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
