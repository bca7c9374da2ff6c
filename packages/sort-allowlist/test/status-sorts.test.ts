import { describe, expect, it } from 'vitest';
import { acceptedSorts, defineSortAllowlist, statusSorts } from '../src/index';

describe('statusSorts', () => {
  it('lists each key alone and status followed by one other key, in both directions', () => {
    expect(statusSorts(['createdAt'])).toEqual([
      'createdAt',
      '-createdAt',
      'status',
      '-status',
      'status,createdAt',
      'status,-createdAt',
      '-status,createdAt',
      '-status,-createdAt',
    ]);
    expect(statusSorts(['createdAt', 'amount'])).toHaveLength(6 + 8);
  });

  it('serves every sort of up to three keys when the other keys are fine-grained', () => {
    const init = {
      fields: {
        createdAt: { column: 'created_at', type: 'timestamp', fineGrained: true },
        amount: { column: 'amount', type: 'number', fineGrained: true },
        status: { column: 'status', type: 'enum', rank: ['pending', 'done'] },
      },
      id: { column: 'id' },
      default: '-createdAt',
    } as const;
    const allowlist = defineSortAllowlist({ ...init, indexed: statusSorts(['createdAt', 'amount']) });
    const everything = defineSortAllowlist(init);
    // Each accepted sort starts with an indexed one ending on a fine-grained key: none refused.
    expect(acceptedSorts(allowlist)).toEqual(acceptedSorts(everything));
    expect(acceptedSorts(everything).length).toBeGreaterThan(statusSorts(['createdAt', 'amount']).length);
  });
});
