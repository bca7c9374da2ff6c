// @ts-check
/** The one timer that refreshes the open view; any navigation or sign-out stops it. */

/** @type {number | undefined} */
let pollTimer;

export function stopPolling() {
  if (pollTimer !== undefined) window.clearTimeout(pollTimer);
  pollTimer = undefined;
}

/**
 * @param {() => void} callback
 * @param {number} ms
 */
export function pollAfter(callback, ms) {
  pollTimer = window.setTimeout(callback, ms);
}
