/** The demo's psql hint never prints the database password. */
import { describe, expect, it } from 'vitest';
import { howToQuery } from '../../src/commands/demo.js';

describe('the demo hint', () => {
  it('shows the server URL without its password, and says why', () => {
    const text = howToQuery(false, 'postgres://govtrail:s3cret-pw@db.example:5432/govtrail');
    expect(text).not.toContain('s3cret-pw');
    expect(text).toContain('psql "postgres://govtrail@db.example:5432/govtrail"');
    expect(text).toContain('the password is left out');
  });

  it('leaves a URL without a password as it is', () => {
    const text = howToQuery(false, 'postgres://postgres@127.0.0.1:5432/postgres');
    expect(text).toContain('psql "postgres://postgres@127.0.0.1:5432/postgres"');
    expect(text).not.toContain('the password is left out');
  });
});
