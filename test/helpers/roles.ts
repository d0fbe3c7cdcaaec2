/**
 * The writer login of the tests that check what the database lets govtrail's writer role do
 * (tamper-roles, child-rows-have-entry): a login granted `govtrail_writer`, created once per cluster.
 */
import pg from 'pg';

const WRITER_LOGIN = 'govtrail_writer_test_login';

/** Runs `fn` on a client of its own connected to `url`, closed afterwards. */
export async function asClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The test database's URL for the writer login, which is created (once per cluster) if missing. */
export async function writerUrl(ownerUrl: string): Promise<string> {
  await asClient(ownerUrl, async (c) => {
    await c.query(`do $$
      begin
        if not exists (select from pg_roles where rolname = '${WRITER_LOGIN}') then
          begin
            create role ${WRITER_LOGIN} login;
          exception when duplicate_object or unique_violation then null;
          end;
        end if;
      end $$`);
    await c.query(`grant govtrail_writer to ${WRITER_LOGIN}`);
  });
  const u = new URL(ownerUrl);
  u.username = WRITER_LOGIN;
  u.password = '';
  return u.toString();
}
