import { problem } from '@holdfast/problem-details';

/**
 * 400 `validation_failed` for a route that needs a JSON body and got none (an empty body, with
 * or without `Content-Type: application/json`): one clear answer wherever it is noticed.
 */
export function missingBody() {
  return problem('validation_failed', {
    detail: 'This request needs a JSON body: send a JSON object with Content-Type: application/json.',
  });
}
