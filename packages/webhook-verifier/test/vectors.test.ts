import * as signer from '@holdfast/webhook-signer';
import { describe, expect, it } from 'vitest';
import { ed25519Signing } from '../../webhook-signer/src/ed25519-node';
import { hmacSha256 as signerHmac } from '../../webhook-signer/src/hmac-node';
import { keyPairFactory } from '../../webhook-signer/src/key-pair';
import { signerFactory } from '../../webhook-signer/src/sign';
import { ed25519Verify } from '../src/ed25519-node';
import { hmacSha256 } from '../src/hmac-node';
import { createVerifier } from '../src/index';
import { createVerifier as createV1Verifier } from '../src/v1';
import { verifierFactory } from '../src/verify';
import { verifierFactory as v1Factory } from '../src/verify-core';
import { type Packages, runVectors } from './runtimes/vectors';

// The vectors Deno, Bun and workerd run (test/runtimes/run.ts), here on Node for both builds.
const portable: Packages = { ...signer, createVerifier, createV1Verifier };
const node: Packages = {
  createSigner: signerFactory(signerHmac, ed25519Signing),
  ...keyPairFactory(ed25519Signing),
  createVerifier: verifierFactory(hmacSha256, ed25519Verify),
  createV1Verifier: v1Factory(hmacSha256),
};

describe.each([
  ['portable', portable],
  ['node', node],
])('the runtime vectors on Node, %s build', (_name, packages) => {
  it('all pass', async () => {
    const outcomes = await runVectors(packages);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(11);
  });
});
