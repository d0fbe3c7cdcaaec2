import { expect } from 'vitest';
import { GovtrailError } from '../../src/core/errors.js';

/** The GovtrailError a promise rejects with; fails the test when it resolves or throws anything else. */
export async function failure(promise: Promise<unknown>): Promise<GovtrailError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    return err as GovtrailError;
  }
  throw new Error('expected a failure');
}
