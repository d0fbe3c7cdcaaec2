/**
 * A real JSON Schema validator (ajv, draft-07) of OSCAL 1.2.1 assessment-results documents
 * against NIST's published schema in test/fixtures/oscal. The schema's datatypes use Unicode
 * property escapes (`\p{L}`), so regular expressions are compiled with the `u` flag (ajv's
 * `unicodeRegExp`, on by default and set here to say so); the four formats it uses are checked
 * here, since ajv ships no formats of its own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import AjvModule, { type ValidateFunction } from 'ajv';

export const OSCAL_SCHEMA_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'oscal',
  'oscal_assessment-results_schema-1.2.1.json',
);

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

let cached: ValidateFunction | undefined;

/** The compiled validator of an assessment-results document. */
export function oscalValidator(): ValidateFunction {
  if (cached !== undefined) return cached;
  // ajv is CommonJS: its class is the module's default export.
  const Ajv = AjvModule.default;
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: true });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => RFC3339.test(s) && Number.isFinite(Date.parse(s)),
  });
  ajv.addFormat('uri', {
    type: 'string',
    validate: (s: string) => {
      try {
        return new URL(s).protocol !== '';
      } catch {
        return false;
      }
    },
  });
  ajv.addFormat('uri-reference', {
    type: 'string',
    validate: (s: string) => {
      try {
        new URL(s, 'http://base.invalid/');
        return !/\s/.test(s);
      } catch {
        return false;
      }
    },
  });
  ajv.addFormat('email', { type: 'string', validate: (s: string) => /^[^\s@]+@[^\s@]+$/.test(s) });
  cached = ajv.compile(JSON.parse(readFileSync(OSCAL_SCHEMA_FILE, 'utf8')) as object);
  return cached;
}

/** The problems of a document (`path: message`), empty when it is valid. */
export function oscalProblems(document: unknown): string[] {
  const validate = oscalValidator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}
