/**
 * BI metadata (sql/0006_comments.sql): every relation and function of schema govtrail that
 * govtrail_reader may read or execute — found through the privilege functions, not a list, so a
 * future view is covered — has a non-empty comment, and so has each column of those relations
 * (Metabase, Superset and Grafana show them). The check is shown to catch a missing and a blank
 * comment. And docs/data-dictionary.md agrees with the catalog: every such object has a section,
 * every column is named in it, and every name its `| column |` tables list exists.
 */
import { readFileSync } from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/store/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.close();
});

/** Objects a reader-granted dashboard sees today; the checks below find them (and any newer one) by privilege. */
const KNOWN_RELATIONS = [
  'alert_log',
  'change_log',
  'changes_without_ticket',
  'exporter_health',
  'settings_current',
  'settings_timeline',
  'source_discrepancy',
];

interface ReaderRelation {
  readonly name: string;
  readonly kind: string;
  readonly comment: string | null;
}

interface ReaderColumn {
  readonly relation: string;
  readonly column: string;
  readonly comment: string | null;
}

interface ReaderFunction {
  readonly signature: string;
  readonly name: string;
  readonly comment: string | null;
}

interface ReaderObjects {
  readonly relations: readonly ReaderRelation[];
  readonly columns: readonly ReaderColumn[];
  readonly functions: readonly ReaderFunction[];
}

/** Relations with columns (tables, views, materialized views, partitioned and foreign tables). */
const WITH_COLUMNS = "('r', 'v', 'm', 'p', 'f')";

/** What govtrail_reader may SELECT or EXECUTE in schema govtrail, with the comments, from pg_catalog. */
async function readerObjects(db: Kysely<DB>): Promise<ReaderObjects> {
  const relations = await sql<ReaderRelation>`
    select c.relname as name, c.relkind as kind, obj_description(c.oid, 'pg_class') as comment
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'govtrail' and has_table_privilege('govtrail_reader', c.oid, 'select')
    order by c.relname`.execute(db);
  const columns = await sql<ReaderColumn>`
    select c.relname as relation, a.attname as column, col_description(c.oid, a.attnum) as comment
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = 'govtrail' and c.relkind in ${sql.raw(WITH_COLUMNS)}
      and has_table_privilege('govtrail_reader', c.oid, 'select')
    order by c.relname, a.attnum`.execute(db);
  const functions = await sql<ReaderFunction>`
    select p.oid::regprocedure::text as signature, p.proname as name,
           obj_description(p.oid, 'pg_proc') as comment
    from pg_catalog.pg_proc p
    join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'govtrail' and has_function_privilege('govtrail_reader', p.oid, 'execute')
    order by 1`.execute(db);
  return { relations: relations.rows, columns: columns.rows, functions: functions.rows };
}

const blank = (comment: string | null): boolean => comment === null || comment.trim() === '';

/** Every reader-visible object or column without a usable comment, by name. */
function missingComments(o: ReaderObjects): string[] {
  return [
    ...o.relations.filter((r) => blank(r.comment)).map((r) => `relation govtrail.${r.name}`),
    ...o.columns.filter((c) => blank(c.comment)).map((c) => `column govtrail.${c.relation}.${c.column}`),
    ...o.functions.filter((f) => blank(f.comment)).map((f) => `function ${f.signature}`),
  ];
}

describe('comments on what govtrail_reader reads', () => {
  it('finds the reader-granted objects through the privilege functions', async () => {
    const o = await readerObjects(t.database.db);
    expect(o.relations.map((r) => r.name)).toEqual(expect.arrayContaining(KNOWN_RELATIONS));
    expect(o.functions.map((f) => f.name)).toContain('settings_as_of');
    // Not the tables behind the views: the reader has no SELECT on them.
    expect(o.relations.map((r) => r.name)).not.toContain('history_entry');
    // Every relation found has columns (the column check is not vacuous).
    for (const r of o.relations.filter((x) => 'rvmpf'.includes(x.kind)))
      expect(o.columns.some((c) => c.relation === r.name)).toBe(true);
  });

  it('every such relation, each of its columns and every such function has a non-empty comment', async () => {
    expect(missingComments(await readerObjects(t.database.db))).toEqual([]);
  });

  it('the check reports a removed and a blank comment (shown in a rolled-back transaction)', async () => {
    const before = missingComments(await readerObjects(t.database.db));
    const rollback = new Error('rollback');
    let found: string[] = [];
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await sql`comment on column govtrail.change_log.direction is null`.execute(trx);
        await sql`comment on view govtrail.alert_log is '   '`.execute(trx);
        await sql`comment on function govtrail.settings_as_of(text, timestamptz) is null`.execute(trx);
        found = missingComments(await readerObjects(trx));
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(found).toEqual(
      expect.arrayContaining([
        'relation govtrail.alert_log',
        'column govtrail.change_log.direction',
        'function govtrail.settings_as_of(text,timestamp with time zone)',
      ]),
    );
    expect(found).toHaveLength(before.length + 3);
    // Rolled back: the comments are there again.
    expect(missingComments(await readerObjects(t.database.db))).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------
// docs/data-dictionary.md against the catalog

const DICTIONARY = readFileSync(new URL('../../docs/data-dictionary.md', import.meta.url), 'utf8');

/** `### name …` sections of the dictionary, by the identifier that starts the heading. */
function dictionarySections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  let name: string | undefined;
  let body: string[] = [];
  const flush = () => {
    if (name !== undefined) sections.set(name, (sections.get(name) ?? '') + body.join('\n'));
  };
  let inCode = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    if (!inCode && /^#{1,3} /.test(line)) {
      flush();
      const m = /^### ([a-z_][a-z0-9_]*)/.exec(line);
      name = m?.[1];
      body = [line];
    } else {
      body.push(line);
    }
  }
  flush();
  return sections;
}

/**
 * Sections whose columns a section documents by reference: settings_timeline says "every
 * settings_snapshot column", settings_current is "the current settings_timeline row".
 */
const DOCUMENTED_BY_REFERENCE: Record<string, readonly string[]> = {
  settings_timeline: ['settings_snapshot'],
  settings_current: ['settings_timeline', 'settings_snapshot'],
};

const mentions = (text: string, word: string): boolean =>
  new RegExp(`(?<![A-Za-z0-9_])${word}(?![A-Za-z0-9_])`).test(text);

/** Identifiers in the first cell of the rows of the section's `| column | … |` tables. */
function tableColumnNames(section: string): string[] {
  const names: string[] = [];
  let inColumnTable = false;
  for (const line of section.split('\n')) {
    if (!line.startsWith('|')) {
      inColumnTable = false;
      continue;
    }
    const first = line.split('|')[1]?.trim() ?? '';
    if (/^column$/i.test(first)) {
      inColumnTable = true;
      continue;
    }
    if (!inColumnTable || /^-+$/.test(first)) continue;
    for (const part of first.split(',')) {
      const id = part
        .replace(/\*\*\(\+\)\*\*/g, '')
        .replace(/`/g, '')
        .trim();
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(id)) names.push(id);
    }
  }
  return names;
}

describe('docs/data-dictionary.md matches the reader-visible objects', () => {
  const sections = dictionarySections(DICTIONARY);

  it('the dictionary is parsed into its sections', () => {
    expect([...sections.keys()]).toEqual(
      expect.arrayContaining([...KNOWN_RELATIONS, 'settings_as_of', 'settings_snapshot', 'history_entry']),
    );
  });

  it('has a section for every relation and function govtrail_reader may use', async () => {
    const o = await readerObjects(t.database.db);
    const names = [...o.relations.map((r) => r.name), ...o.functions.map((f) => f.name)];
    expect(names.filter((n) => !sections.has(n))).toEqual([]);
  });

  it('names every column of those relations in its section', async () => {
    const o = await readerObjects(t.database.db);
    const undocumented = o.columns
      .filter((c) => {
        const text = [c.relation, ...(DOCUMENTED_BY_REFERENCE[c.relation] ?? [])]
          .map((s) => sections.get(s) ?? '')
          .join('\n');
        return !mentions(text, c.column);
      })
      .map((c) => `${c.relation}.${c.column}`);
    expect(undocumented).toEqual([]);
  });

  it('lists in its column tables only columns that exist', async () => {
    const o = await readerObjects(t.database.db);
    const unknown: string[] = [];
    for (const r of o.relations) {
      const existing = new Set(o.columns.filter((c) => c.relation === r.name).map((c) => c.column));
      const listed = tableColumnNames(sections.get(r.name) ?? '');
      unknown.push(...listed.filter((n) => !existing.has(n)).map((n) => `${r.name}.${n}`));
    }
    expect(unknown).toEqual([]);
  });
});
