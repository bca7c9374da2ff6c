/** Whether `pathname` is `base` or below it (`/webhooks`, `/webhooks/...`; everything for `''`). */
export function under(base: string, pathname: string): boolean {
  return base === '' || pathname === base || pathname.startsWith(`${base}/`);
}
